import type { ExternalAsk, StoredToken } from "../ports/api-store.js";
import type { Ask } from "../ports/session-store.js";

/** The API's rows in memory: its asks' records (callbacks included) and admins' tokens. */
export class MemoryApiRecords {
  private readonly externals = new Map<string, ExternalAsk>();
  private readonly tokens: StoredToken[] = [];

  add(external: ExternalAsk): void {
    this.externals.set(external.askId, structuredClone(external));
  }

  get(askId: string): ExternalAsk | undefined {
    const external = this.externals.get(askId);
    return external ? structuredClone(external) : undefined;
  }

  byIdempotencyKey(token: string, key: string): ExternalAsk | undefined {
    for (const external of this.externals.values())
      if (external.token === token && external.idempotencyKey === key) return structuredClone(external);
    return undefined;
  }

  due(now: number, limit: number, askOf: (askId: string) => Ask | undefined): Array<{ external: ExternalAsk; ask: Ask }> {
    const due: Array<{ external: ExternalAsk; ask: Ask }> = [];
    for (const external of this.externals.values()) {
      const ask = askOf(external.askId);
      if (!ask || ask.status === "pending" || external.callbackUrl === null || external.callbackDoneAt !== null) continue;
      if (external.callbackNextAt !== null && external.callbackNextAt > now) continue;
      due.push({ external: structuredClone(external), ask });
    }
    return due.sort((a, b) => (a.ask.endedAt ?? 0) - (b.ask.endedAt ?? 0)).slice(0, limit);
  }

  take(askId: string, now: number, retryAt: number): number | undefined {
    const external = this.externals.get(askId);
    if (!external || external.callbackDoneAt !== null || (external.callbackNextAt !== null && external.callbackNextAt > now))
      return undefined;
    external.callbackAttempts++;
    external.callbackNextAt = retryAt;
    return external.callbackAttempts;
  }

  finish(askId: string, outcome: string, now: number): void {
    const external = this.externals.get(askId);
    if (!external || external.callbackDoneAt !== null) return;
    external.callbackDoneAt = now;
    external.callbackOutcome = outcome;
  }

  forget(askIds: ReadonlySet<string>): void {
    for (const askId of askIds) this.externals.delete(askId);
  }

  saveToken(token: StoredToken): boolean {
    if (this.tokens.some((stored) => stored.name === token.name)) return false;
    this.tokens.push({ ...token });
    return true;
  }

  revokeToken(name: string, now: number): boolean {
    const live = this.tokens.find((stored) => stored.name === name && stored.revokedAt === null);
    if (!live) return false;
    live.revokedAt = now;
    return true;
  }

  listTokens(): StoredToken[] {
    return this.tokens.map((token) => ({ ...token }));
  }
}
