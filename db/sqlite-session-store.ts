import type Database from "better-sqlite3";
import type { ExternalAsk, ExternalCreate, NewExternalAsk, StoredToken } from "../src/ports/api-store.js";
import { asAskId, asSessionId } from "../src/ports/ids.js";
import type { PurgeCounts, SessionFilter, Storage, StoreStats, WrittenReply } from "../src/ports/maintenance-store.js";
import { type Ask, type ConversationRef, conversationKey, type Session, type SessionStatus } from "../src/ports/session-store.js";
import { openDatabase } from "./open-database.js";
import { SqliteAdminQueries } from "./sqlite-admin-queries.js";
import { SqliteApiStore } from "./sqlite-api-store.js";
import { translateStoreErrors } from "./sqlite-errors.js";
import { SqliteHotPath } from "./sqlite-hot-path.js";
import { SqliteMaintenance } from "./sqlite-maintenance.js";
import { sessionRowOf, toAsk } from "./sqlite-rows.js";
import { newAskParameters } from "./sqlite-statements.js";
import { WalCheckpointer } from "./wal-checkpointer.js";

/**
 * The Storage on one SQLite file: the hot path is inherited; maintenance, admin queries and the API's rows are
 * helpers sharing the one connection, each preparing its own statements.
 */
export class SqliteSessionStore extends SqliteHotPath implements Storage {
  private readonly maintenance: SqliteMaintenance;
  private readonly admin: SqliteAdminQueries;
  private readonly api: SqliteApiStore;
  private readonly checkpointer: WalCheckpointer | undefined;

  /** `checkpoints: "on-commit"` leaves checkpoints to SQLite (each commit past 1,000 WAL pages), for comparison. */
  constructor(pathOrDatabase: string | Database.Database, options: { busyTimeoutMs?: number; checkpoints?: "worker" | "on-commit" } = {}) {
    super(typeof pathOrDatabase === "string" ? openDatabase(pathOrDatabase, options) : pathOrDatabase);
    if (typeof pathOrDatabase === "string" && pathOrDatabase !== ":memory:" && options.checkpoints !== "on-commit")
      this.checkpointer = new WalCheckpointer(this.db, pathOrDatabase);
    this.maintenance = new SqliteMaintenance(this.db);
    this.admin = new SqliteAdminQueries(this.db);
    this.api = new SqliteApiStore(this.db, toAsk);
  }

  async pruneEvents(before: number): Promise<number> {
    return this.maintenance.pruneEvents(before);
  }

  async listPendingReplies(before: number, limit: number): Promise<WrittenReply[]> {
    return this.maintenance.listPendingReplies(before, limit);
  }

  async listUnsettledAsks(since: number, limit: number): Promise<Ask[]> {
    this.writeSettledMarks();
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
    this.admin.saveSetting(key, value);
  }

  async createExternalAsk(input: NewExternalAsk): Promise<ExternalCreate> {
    return this.db
      .transaction((): ExternalCreate => {
        const earlier = input.idempotencyKey === null ? undefined : this.api.byIdempotencyKey(input.token, input.idempotencyKey);
        if (earlier) return { kind: "replayed", external: earlier };
        const { conversation, id, ownerId } = input.session;
        const key = conversationKey(conversation);
        // A thread with a session keeps it (the insert is ignored); only an idle or failed one may wait on this ask.
        this.statements.insertSession.run({ id, key, ...conversation, owner: ownerId, now: input.now });
        const session = sessionRowOf(this.statements.sessionByKey.get(key)!);
        if (session.status !== "idle" && session.status !== "failed") return { kind: "busy" };
        const { ask } = input;
        this.statements.insertAsk.run(newAskParameters(ask, session.id, input.now));
        this.statements.waitOnExternal.run(input.now, session.id);
        this.api.insert({ ...input, askId: asAskId(ask.id) });
        return { kind: "created", askId: asAskId(ask.id), sessionId: asSessionId(session.id) };
      })
      .immediate();
  }

  async getExternalAsk(askId: string): Promise<ExternalAsk | undefined> {
    return this.api.get(askId);
  }

  async findByIdempotencyKey(token: string, key: string): Promise<ExternalAsk | undefined> {
    return this.api.byIdempotencyKey(token, key);
  }

  async listDueCallbacks(now: number, limit: number): Promise<Array<{ external: ExternalAsk; ask: Ask }>> {
    return this.api.due(now, limit);
  }

  async takeCallback(askId: string, now: number, retryAt: number): Promise<number | undefined> {
    return this.api.take(askId, now, retryAt);
  }

  async finishCallback(askId: string, outcome: string, now: number): Promise<void> {
    this.api.finish(askId, outcome, now);
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

  async ping(): Promise<void> {
    this.statements.ping.get();
  }

  async close(): Promise<void> {
    this.writeSettledMarks();
    await this.checkpointer?.stop();
    if (this.db.open) this.db.close();
  }
}

translateStoreErrors(SqliteSessionStore.prototype);
