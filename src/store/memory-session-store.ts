import type { ApiStore, ExternalAsk, ExternalCreate, NewExternalAsk, StoredToken } from "../ports/api-store.js";
import { asAskId } from "../ports/ids.js";
import type { PurgeCounts, SessionFilter, Storage, StoreStats, WrittenReply } from "../ports/maintenance-store.js";
import { type Ask, type ConversationRef, conversationKey, type Session, type SessionStatus } from "../ports/session-store.js";
import { MemoryAdminQueries } from "./memory-admin-queries.js";
import { MemoryHotPath } from "./memory-hot-path.js";
import { MemoryMaintenance } from "./memory-maintenance.js";
import { copy } from "./memory-tables.js";

/**
 * The Storage in memory, for tests and benches; it passes the same contract suite as SQLite and PostgreSQL.
 * The hot path is inherited; maintenance and admin queries are helpers over the same tables, as in the databases.
 */
export class MemorySessionStore extends MemoryHotPath implements Storage, ApiStore {
  private readonly maintenance = new MemoryMaintenance(this.tables);
  private readonly admin = new MemoryAdminQueries(this.tables);
  readonly auditTrail = this.tables.auditTrail;

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
    return this.admin.saveSetting(key, value);
  }

  async createExternalAsk(input: NewExternalAsk): Promise<ExternalCreate> {
    const { api, byKey, sessions } = this.tables;
    const earlier = input.idempotencyKey === null ? undefined : api.byIdempotencyKey(input.token, input.idempotencyKey);
    if (earlier) return { kind: "replayed", external: earlier };
    const session = sessions.get(byKey.get(conversationKey(input.session.conversation)) ?? "");
    if (session && session.status !== "idle" && session.status !== "failed") return { kind: "busy" };
    const target = this.tables.boundSession(input.session);
    this.tables.addAsk(input.ask, target.id, input.now);
    target.status = "waiting";
    target.updatedAt = input.now;
    api.add({
      askId: asAskId(input.ask.id),
      token: input.token,
      metadata: copy(input.metadata),
      callbackUrl: input.callbackUrl,
      idempotencyKey: input.idempotencyKey,
      requestHash: input.requestHash,
      callbackAttempts: 0,
      callbackNextAt: null,
      callbackDoneAt: null,
      callbackOutcome: null,
    });
    return { kind: "created", askId: asAskId(input.ask.id), sessionId: target.id };
  }

  async getExternalAsk(askId: string): Promise<ExternalAsk | undefined> {
    return this.tables.api.get(askId);
  }

  async findByIdempotencyKey(token: string, key: string): Promise<ExternalAsk | undefined> {
    return this.tables.api.byIdempotencyKey(token, key);
  }

  async listDueCallbacks(now: number, limit: number): Promise<Array<{ external: ExternalAsk; ask: Ask }>> {
    return this.tables.api.due(now, limit, (askId) => {
      const ask = this.tables.asks.get(askId);
      return ask ? copy(ask) : undefined;
    });
  }

  async takeCallback(askId: string, now: number, retryAt: number): Promise<number | undefined> {
    return this.tables.api.take(askId, now, retryAt);
  }

  async finishCallback(askId: string, outcome: string, now: number): Promise<void> {
    this.tables.api.finish(askId, outcome, now);
  }

  async saveToken(token: StoredToken): Promise<boolean> {
    return this.tables.api.saveToken(token);
  }

  async revokeToken(name: string, now: number): Promise<boolean> {
    return this.tables.api.revokeToken(name, now);
  }

  async listTokens(): Promise<StoredToken[]> {
    return this.tables.api.listTokens();
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {}
}
