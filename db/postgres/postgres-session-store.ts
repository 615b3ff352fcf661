import type pg from "pg";
import type { ExternalAsk, ExternalCreate, NewExternalAsk, StoredToken } from "../../src/ports/api-store.js";
import type { PurgeCounts, SessionFilter, Storage, StoreStats, WrittenReply } from "../../src/ports/maintenance-store.js";
import type { Ask, ConversationRef, Session, SessionStatus } from "../../src/ports/session-store.js";
import { migrate } from "./migrate.js";
import { PostgresAdminQueries } from "./postgres-admin-queries.js";
import { PostgresApiStore } from "./postgres-api-store.js";
import { PostgresChangeFeed } from "./postgres-changes.js";
import { translated } from "./postgres-errors.js";
import { PostgresHotPath } from "./postgres-hot-path.js";
import { PostgresMaintenance } from "./postgres-maintenance.js";
import { createPool, type PoolOptions } from "./postgres-pool.js";
import { SQL } from "./postgres-statements.js";

/** Options of `PostgresSessionStore.open`: the schema, the lock timeout, the pool size. */
export type PostgresStoreOptions = PoolOptions;

/**
 * The Storage on PostgreSQL, for several Parley processes behind a load balancer (DESIGN.md §13). The hot path is
 * inherited; maintenance, admin queries and the API's rows are helpers sharing the one pool.
 */
export class PostgresSessionStore extends PostgresHotPath implements Storage {
  private readonly maintenance: PostgresMaintenance;
  private readonly admin: PostgresAdminQueries;
  private readonly api: PostgresApiStore;

  private constructor(
    pool: pg.Pool,
    /** Stops and ask endings committed by any process, heard at once (LISTEN/NOTIFY). */
    readonly changes: PostgresChangeFeed,
  ) {
    super(pool);
    this.maintenance = new PostgresMaintenance(pool);
    this.admin = new PostgresAdminQueries(pool);
    this.api = new PostgresApiStore(pool);
  }

  /** Connects, applies pending migrations (once across processes), and returns the store. */
  static async open(url: string, options: PostgresStoreOptions = {}): Promise<PostgresSessionStore> {
    const pool = createPool(url, options);
    try {
      await translated(() => migrate(pool, options.schema));
    } catch (error) {
      await pool.end();
      throw error;
    }
    return new PostgresSessionStore(pool, new PostgresChangeFeed(url, options.schema));
  }

  async pruneEvents(before: number): Promise<number> {
    return this.maintenance.pruneEvents(before);
  }

  async listPendingReplies(before: number, limit: number): Promise<WrittenReply[]> {
    return this.maintenance.listPendingReplies(before, limit);
  }

  async listUnsettledAsks(since: number, limit: number): Promise<Ask[]> {
    return this.maintenance.listUnsettledAsks(since, limit);
  }

  async listUnpostedAsks(): Promise<Ask[]> {
    return this.maintenance.listUnpostedAsks();
  }

  async listExpiredAsks(now: number, limit: number): Promise<Ask[]> {
    return this.maintenance.listExpiredAsks(now, limit);
  }

  async listRecentConversations(platform: string, since: number, limit: number): Promise<ConversationRef[]> {
    return this.maintenance.listRecentConversations(platform, since, limit);
  }

  async listSessionsByStatus(status: SessionStatus): Promise<Session[]> {
    return this.maintenance.listSessionsByStatus(status);
  }

  async countRecovery(sessionId: string): Promise<number> {
    return this.maintenance.countRecovery(sessionId);
  }

  async listSessions(filter: SessionFilter): Promise<Session[]> {
    return this.admin.listSessions(filter);
  }

  async listAsks(sessionId: string): Promise<Ask[]> {
    return this.admin.listAsks(sessionId);
  }

  async stats(): Promise<StoreStats> {
    return this.admin.stats();
  }

  async purgeEnded(before: number): Promise<PurgeCounts> {
    return this.admin.purgeEnded(before);
  }

  async loadSettings(): Promise<Record<string, string>> {
    return this.admin.loadSettings();
  }

  async saveSetting(key: string, value: string): Promise<void> {
    await this.admin.saveSetting(key, value);
  }

  async createExternalAsk(input: NewExternalAsk): Promise<ExternalCreate> {
    return this.api.createExternalAsk(input);
  }

  async getExternalAsk(askId: string): Promise<ExternalAsk | undefined> {
    return this.api.getExternalAsk(askId);
  }

  async findByIdempotencyKey(token: string, key: string): Promise<ExternalAsk | undefined> {
    return this.api.findByIdempotencyKey(token, key);
  }

  async listDueCallbacks(now: number, limit: number): Promise<Array<{ external: ExternalAsk; ask: Ask }>> {
    return this.api.listDueCallbacks(now, limit);
  }

  async takeCallback(askId: string, now: number, retryAt: number): Promise<number | undefined> {
    return this.api.takeCallback(askId, now, retryAt);
  }

  async finishCallback(askId: string, outcome: string, now: number): Promise<void> {
    await this.api.finishCallback(askId, outcome, now);
  }

  async saveToken(token: StoredToken): Promise<boolean> {
    return this.api.saveToken(token);
  }

  async revokeToken(name: string, now: number): Promise<boolean> {
    return this.api.revokeToken(name, now);
  }

  async listTokens(): Promise<StoredToken[]> {
    return this.api.listTokens();
  }

  /** Reads one row: resolves when the database answers. */
  async ping(): Promise<void> {
    await this.query(SQL.ping, []);
  }

  /** Ends the pool; waits for checked-out connections to come back. Safe to call twice. */
  async close(): Promise<void> {
    await this.changes.close();
    if (!this.pool.ended && !this.pool.ending) await this.pool.end();
  }
}
