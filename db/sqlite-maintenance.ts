import type Database from "better-sqlite3";
import { asSessionId } from "../src/ports/ids.js";
import type { WrittenReply } from "../src/ports/maintenance-store.js";
import type { Ask, ConversationRef, Session, SessionStatus } from "../src/ports/session-store.js";
import { type AskRow, type SessionRow, toAsk, toSession } from "./sqlite-rows.js";

/** What the sweeper and start-up recovery read on the SQLite file (MaintenanceStore); the store wraps each in a promise. */
export class SqliteMaintenance {
  private readonly statements;

  constructor(db: Database.Database) {
    this.statements = {
      pruneEvents: db.prepare("DELETE FROM processed_events WHERE at < ?"),
      // Start-up only: a scan of sessions, once.
      recentSessions: db.prepare<[string, number, number], SessionRow>(
        "SELECT * FROM sessions WHERE platform = ? AND updated_at >= ? ORDER BY updated_at DESC, id LIMIT ?",
      ),
      sessionsByStatus: db.prepare<[string], SessionRow>("SELECT * FROM sessions WHERE status = ? ORDER BY updated_at"),
      // The sweeper reads this every few seconds: the status is written out so the partial index applies.
      runningSessions: db.prepare<[], SessionRow>("SELECT * FROM sessions WHERE status = 'running' ORDER BY updated_at"),
      pendingReplies: db.prepare<[number, number], { key: string; session_id: string; text: string; created_at: number }>(
        "SELECT key, session_id, text, created_at FROM pending_replies WHERE created_at < ? ORDER BY created_at, key LIMIT ?",
      ),
      unsettled: db.prepare<[number, number], AskRow>(
        `SELECT * FROM asks WHERE status != 'pending' AND card_ref IS NOT NULL AND settled_at IS NULL AND ended_at >= ?
         ORDER BY ended_at LIMIT ?`,
      ),
      unposted: db.prepare<[], AskRow>("SELECT * FROM asks WHERE status = 'pending' AND card_ref IS NULL ORDER BY deadline"),
      expired: db.prepare<[number, number], AskRow>(
        "SELECT * FROM asks WHERE status = 'pending' AND deadline <= ? AND card_ref IS NOT NULL ORDER BY deadline LIMIT ?",
      ),
      countRecovery: db.prepare<[string], { recovery_attempts: number }>(
        "UPDATE sessions SET recovery_attempts = recovery_attempts + 1 WHERE id = ? RETURNING recovery_attempts",
      ),
    };
  }

  pruneEvents(before: number): number {
    return this.statements.pruneEvents.run(before).changes;
  }

  listPendingReplies(before: number, limit: number): WrittenReply[] {
    return this.statements.pendingReplies
      .all(before, limit)
      .map((row) => ({ key: row.key, sessionId: asSessionId(row.session_id), text: row.text, writtenAt: row.created_at }));
  }

  listUnsettledAsks(since: number, limit: number): Ask[] {
    return this.statements.unsettled.all(since, limit).map(toAsk);
  }

  listUnpostedAsks(): Ask[] {
    return this.statements.unposted.all().map(toAsk);
  }

  listExpiredAsks(now: number, limit: number): Ask[] {
    return this.statements.expired.all(now, limit).map(toAsk);
  }

  listRecentConversations(platform: string, since: number, limit: number): ConversationRef[] {
    return this.statements.recentSessions.all(platform, since, limit).map((row) => toSession(row).conversation);
  }

  listSessionsByStatus(status: SessionStatus): Session[] {
    const rows = status === "running" ? this.statements.runningSessions.all() : this.statements.sessionsByStatus.all(status);
    return rows.map(toSession);
  }

  countRecovery(sessionId: string): number {
    return this.statements.countRecovery.get(sessionId)?.recovery_attempts ?? 0;
  }
}
