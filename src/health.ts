import type { HealthProbe, HealthReport } from "./ports/health.js";

/** A database that has not answered in this long counts as down: a health check must answer quickly itself. */
export const PING_TIMEOUT_MS = 2000;

export interface HealthSources {
  ping: () => Promise<void>;
  /** The platforms to report, read at each check (adapters are created after the probe). */
  platforms: () => ReadonlyArray<{ platform: string; connected(): boolean }>;
  timeoutMs?: number;
}

/** `/healthz` checks the database answers; `/readyz` adds that every configured platform is connected. */
export function createHealthProbe(sources: HealthSources): HealthProbe {
  const live = async (): Promise<HealthReport> => {
    const database = await answers(sources.ping, sources.timeoutMs ?? PING_TIMEOUT_MS);
    return { ok: database === "ok", checks: { database } };
  };
  return {
    live,
    async ready() {
      const report = await live();
      for (const adapter of sources.platforms()) report.checks[adapter.platform] = adapter.connected() ? "ok" : "not connected";
      return { ok: Object.values(report.checks).every((check) => check === "ok"), checks: report.checks };
    },
  };
}

async function answers(ping: () => Promise<void>, timeoutMs: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${timeoutMs} ms`), timeoutMs);
  });
  try {
    return await Promise.race([ping().then(() => "ok"), timeout]);
  } catch (error) {
    // The error's own words, never a connection string: StoreErrors carry a code and a plain message.
    return (error as { code?: string }).code ?? (error instanceof Error ? error.message : "unavailable");
  } finally {
    clearTimeout(timer);
  }
}
