import pg from "pg";
import type { StoreChange, StoreChanges } from "../../src/ports/store-changes.js";

const RECONNECT_MIN_MS = 500;
const RECONNECT_MAX_MS = 30_000;

/**
 * The channel the store's statements notify (`pg_notify('parley:' || current_schema(), …)`, on commit only): one
 * per schema, so deployments or test runs sharing a database never hear each other.
 */
export function changeChannel(schema: string): string {
  return `parley:${schema}`;
}

/** `stop:<sessionId>` or `ask:<askId>`, as postgres-statements.ts writes them. */
export function parseChange(payload: string | undefined): StoreChange | undefined {
  const colon = payload?.indexOf(":") ?? -1;
  if (payload === undefined || colon < 0) return undefined;
  const [kind, id] = [payload.slice(0, colon), payload.slice(colon + 1)];
  if (id === "") return undefined;
  if (kind === "stop") return { kind: "stop-requested", sessionId: id };
  if (kind === "ask") return { kind: "ask-ended", askId: id };
  return undefined;
}

/**
 * LISTENs on one dedicated connection, opened on the first subscription and reopened with backoff when it drops;
 * a notice sent while it was down is lost, which the engine's polling covers.
 */
export class PostgresChangeFeed implements StoreChanges {
  private readonly listeners = new Set<(change: StoreChange) => void>();
  private client: pg.Client | undefined;
  private retryMs = RECONNECT_MIN_MS;
  private listening = false;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly schema: string | undefined,
  ) {}

  subscribe(listener: (change: StoreChange) => void): () => void {
    this.listeners.add(listener);
    if (!this.client && !this.timer) void this.connect();
    return () => this.listeners.delete(listener);
  }

  /** Resolves once the feed is listening (tests, and start-up that wants no gap). */
  async ready(): Promise<void> {
    while (!this.closed && !this.listening) await new Promise((resolve) => setTimeout(resolve, 20));
  }

  private async connect(): Promise<void> {
    this.timer = undefined;
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.url });
    this.client = client;
    client.on("error", () => this.reconnect(client));
    client.on("end", () => this.reconnect(client));
    client.on("notification", (message) => {
      const change = parseChange(message.payload);
      if (change) for (const listener of this.listeners) listener(change);
    });
    try {
      await client.connect();
      const schema = this.schema ?? (await client.query<{ schema: string }>("SELECT current_schema() AS schema")).rows[0]?.schema;
      await client.query(`LISTEN ${pg.escapeIdentifier(changeChannel(schema ?? "public"))}`);
      this.listening = true;
      this.retryMs = RECONNECT_MIN_MS;
    } catch {
      this.reconnect(client);
    }
  }

  private reconnect(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.listening = false;
    client.end().catch(() => {});
    if (this.closed) return;
    this.timer = setTimeout(() => void this.connect(), this.retryMs);
    this.timer.unref();
    this.retryMs = Math.min(this.retryMs * 2, RECONNECT_MAX_MS);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    this.listening = false;
    await client?.end().catch(() => {});
  }
}
