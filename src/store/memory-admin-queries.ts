import type { AdminQueries, PurgeCounts, SessionFilter, StoreStats } from "../ports/maintenance-store.js";
import { type Ask, conversationKey, type Session } from "../ports/session-store.js";
import { computeStats } from "./memory-stats.js";
import { copy, type MemoryTables } from "./memory-tables.js";

/** The queries and settings behind /parley over the in-memory tables. */
export class MemoryAdminQueries implements AdminQueries {
  constructor(private readonly tables: MemoryTables) {}

  async listSessions(filter: SessionFilter): Promise<Session[]> {
    return [...this.tables.sessions.values()]
      .filter((session) => !filter.status || session.status === filter.status)
      .filter((session) => !filter.channel || session.conversation.channel === filter.channel)
      .filter((session) => !filter.ownerId || session.ownerId === filter.ownerId)
      .sort((a, b) => b.updatedAt - a.updatedAt || a.id.localeCompare(b.id))
      .slice(filter.offset, filter.offset + filter.limit)
      .map(copy);
  }

  async listAsks(sessionId: string): Promise<Ask[]> {
    return [...this.tables.asks.values()].filter((ask) => ask.sessionId === sessionId).map(copy);
  }

  async stats(): Promise<StoreStats> {
    return computeStats(this.tables.sessions.values(), this.tables.asks.values());
  }

  async purgeEnded(before: number): Promise<PurgeCounts> {
    const tables = this.tables;
    const counts = { sessions: 0, messages: 0, asks: 0 };
    for (const session of [...tables.sessions.values()]) {
      if ((session.status !== "idle" && session.status !== "failed") || session.updatedAt >= before) continue;
      counts.sessions++;
      counts.messages += tables.messages.get(session.id)?.length ?? 0;
      for (const [id, ask] of tables.asks) {
        if (ask.sessionId !== session.id) continue;
        tables.asks.delete(id);
        tables.settledCards.delete(id);
        tables.api.forget(new Set([id]));
        counts.asks++;
      }
      tables.messages.delete(session.id);
      tables.queued.delete(session.id);
      for (const [key, record] of tables.toolCalls) if (record.sessionId === session.id) tables.toolCalls.delete(key);
      tables.sessions.delete(session.id);
      tables.byKey.delete(conversationKey(session.conversation));
    }
    return counts;
  }

  async loadSettings(): Promise<Record<string, string>> {
    return Object.fromEntries(this.tables.settings);
  }

  async saveSetting(key: string, value: string): Promise<void> {
    this.tables.settings.set(key, value);
  }
}
