import type { MaintenanceStore, WrittenReply } from "../ports/maintenance-store.js";
import type { Ask, ConversationRef, Session, SessionStatus } from "../ports/session-store.js";
import { copy, type MemoryTables } from "./memory-tables.js";

/** The sweeper's and recovery's reads over the in-memory tables. */
export class MemoryMaintenance implements MaintenanceStore {
  constructor(private readonly tables: MemoryTables) {}

  async pruneEvents(before: number): Promise<number> {
    let pruned = 0;
    for (const [eventId, at] of this.tables.events) {
      if (at >= before) continue;
      this.tables.events.delete(eventId);
      pruned++;
    }
    return pruned;
  }

  async listPendingReplies(before: number, limit: number): Promise<WrittenReply[]> {
    return [...this.tables.replies.values()]
      .filter((entry) => entry.createdAt < before)
      .slice(0, limit)
      .map((entry) => ({ ...copy(entry.reply), writtenAt: entry.createdAt }));
  }

  async listUnsettledAsks(since: number, limit: number): Promise<Ask[]> {
    const { settledCards } = this.tables;
    return [...this.tables.asks.values()]
      .filter((ask) => ask.status !== "pending" && ask.cardRef !== null && (ask.endedAt ?? 0) >= since && !settledCards.has(ask.id))
      .sort((a, b) => (a.endedAt ?? 0) - (b.endedAt ?? 0))
      .slice(0, limit)
      .map(copy);
  }

  async listUnpostedAsks(): Promise<Ask[]> {
    return [...this.tables.asks.values()].filter((ask) => ask.status === "pending" && ask.cardRef === null).map(copy);
  }

  async listExpiredAsks(now: number, limit: number): Promise<Ask[]> {
    return [...this.tables.asks.values()]
      .filter((ask) => ask.status === "pending" && ask.deadline <= now && ask.cardRef !== null)
      .sort((a, b) => a.deadline - b.deadline)
      .slice(0, limit)
      .map(copy);
  }

  async listRecentConversations(platform: string, since: number, limit: number): Promise<ConversationRef[]> {
    return [...this.tables.sessions.values()]
      .filter((session) => session.conversation.platform === platform && session.updatedAt >= since)
      .sort((a, b) => b.updatedAt - a.updatedAt)
      .slice(0, limit)
      .map((session) => copy(session.conversation));
  }

  async listSessionsByStatus(status: SessionStatus): Promise<Session[]> {
    return [...this.tables.sessions.values()].filter((session) => session.status === status).map(copy);
  }

  async countRecovery(sessionId: string): Promise<number> {
    return ++this.tables.mustGet(sessionId).recoveryAttempts;
  }
}
