import type pg from "pg";
import { asSessionId } from "../../src/ports/ids.js";
import type { MaintenanceStore, WrittenReply } from "../../src/ports/maintenance-store.js";
import type { Ask, ConversationRef, Session, SessionStatus } from "../../src/ports/session-store.js";
import { translated } from "./postgres-errors.js";
import { run, type Statement } from "./postgres-pool.js";
import { type AskRow, type SessionRow, toAsk, toSession } from "./postgres-rows.js";
import { SQL } from "./postgres-statements.js";

/** What the sweeper and start-up recovery read on PostgreSQL: a helper of PostgresSessionStore sharing its pool. */
export class PostgresMaintenance implements MaintenanceStore {
  constructor(private readonly pool: pg.Pool) {}

  async pruneEvents(before: number): Promise<number> {
    return (await this.query(SQL.pruneEvents, [before])).rowCount ?? 0;
  }

  async listPendingReplies(before: number, limit: number): Promise<WrittenReply[]> {
    type Row = { key: string; session_id: string; text: string; created_at: number };
    const { rows } = await this.query<Row>(SQL.pendingReplies, [before, limit]);
    return rows.map((row) => ({ key: row.key, sessionId: asSessionId(row.session_id), text: row.text, writtenAt: row.created_at }));
  }

  async listUnsettledAsks(since: number, limit: number): Promise<Ask[]> {
    return (await this.query<AskRow>(SQL.unsettled, [since, limit])).rows.map(toAsk);
  }

  async listUnpostedAsks(): Promise<Ask[]> {
    return (await this.query<AskRow>(SQL.unposted, [])).rows.map(toAsk);
  }

  async listExpiredAsks(now: number, limit: number): Promise<Ask[]> {
    return (await this.query<AskRow>(SQL.expired, [now, limit])).rows.map(toAsk);
  }

  async listRecentConversations(platform: string, since: number, limit: number): Promise<ConversationRef[]> {
    const { rows } = await this.query<SessionRow>(SQL.recentSessions, [platform, since, limit]);
    return rows.map((row) => toSession(row).conversation);
  }

  async listSessionsByStatus(status: SessionStatus): Promise<Session[]> {
    const { rows } =
      status === "running"
        ? await this.query<SessionRow>(SQL.runningSessions, [])
        : await this.query<SessionRow>(SQL.sessionsByStatus, [status]);
    return rows.map(toSession);
  }

  async countRecovery(sessionId: string): Promise<number> {
    return (await this.query<{ recovery_attempts: number }>(SQL.countRecovery, [sessionId])).rows[0]?.recovery_attempts ?? 0;
  }

  private async query<Row extends pg.QueryResultRow>(statement: Statement, values: unknown[]): Promise<pg.QueryResult<Row>> {
    return translated(() => run<Row>(this.pool, statement, values));
  }
}
