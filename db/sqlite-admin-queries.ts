import type Database from "better-sqlite3";
import type { PurgeCounts, SessionFilter, StoreStats } from "../src/ports/maintenance-store.js";
import type { Ask, AskStatus, Session, SessionStatus } from "../src/ports/session-store.js";
import { type AskRow, type SessionRow, toAsk, toSession } from "./sqlite-rows.js";

const SESSION_STATUSES: SessionStatus[] = ["idle", "running", "waiting", "failed"];
const ASK_STATUSES: AskStatus[] = ["pending", "answered", "cancelled", "expired"];

/** The read-mostly queries behind /parley: listing, stats, purge and settings. */
export class SqliteAdminQueries {
  private readonly statements;

  constructor(private readonly db: Database.Database) {
    this.statements = {
      sessionCounts: db.prepare<[], { status: SessionStatus; count: number }>(
        "SELECT status, COUNT(*) AS count FROM sessions GROUP BY status",
      ),
      askCounts: db.prepare<[], { status: AskStatus; count: number }>("SELECT status, COUNT(*) AS count FROM asks GROUP BY status"),
      answeredCount: db.prepare<[], { count: number }>("SELECT COUNT(*) AS count FROM asks WHERE status = 'answered'"),
      answerDuration: db.prepare<[number], { duration: number }>(
        "SELECT ended_at - created_at AS duration FROM asks WHERE status = 'answered' ORDER BY duration LIMIT 1 OFFSET ?",
      ),
      usage: db.prepare<[], { input: number; output: number; cacheRead: number; cacheWrite: number }>(
        `SELECT COALESCE(SUM(input_tokens), 0) AS input, COALESCE(SUM(output_tokens), 0) AS output,
           COALESCE(SUM(cache_read_tokens), 0) AS cacheRead, COALESCE(SUM(cache_write_tokens), 0) AS cacheWrite FROM sessions`,
      ),
      purgeable: db.prepare<[number], { id: string }>("SELECT id FROM sessions WHERE status IN ('idle', 'failed') AND updated_at < ?"),
      deleteMessages: db.prepare("DELETE FROM messages WHERE session_id = ?"),
      deleteAsks: db.prepare("DELETE FROM asks WHERE session_id = ?"),
      deleteApiAsks: db.prepare("DELETE FROM api_asks WHERE ask_id IN (SELECT id FROM asks WHERE session_id = ?)"),
      deleteQueued: db.prepare("DELETE FROM queued_messages WHERE session_id = ?"),
      deleteToolCalls: db.prepare("DELETE FROM tool_calls WHERE session_id = ?"),
      deleteSession: db.prepare("DELETE FROM sessions WHERE id = ? AND status IN ('idle', 'failed')"),
      asksOfSession: db.prepare<[string], AskRow>("SELECT * FROM asks WHERE session_id = ? ORDER BY created_at, id"),
      settings: db.prepare<[], { key: string; value: string }>("SELECT key, value FROM settings"),
      saveSetting: db.prepare("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"),
    };
  }

  /** Builds the filtered listing; the WHERE clause only ever holds fixed fragments with bound values. */
  listSessions(filter: SessionFilter): Session[] {
    const where: string[] = [];
    const values: Array<string | number> = [];
    if (filter.status) {
      where.push("status = ?");
      values.push(filter.status);
    }
    if (filter.channel) {
      where.push("channel = ?");
      values.push(filter.channel);
    }
    if (filter.ownerId) {
      where.push("owner_id = ?");
      values.push(filter.ownerId);
    }
    const sql = `SELECT * FROM sessions ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY updated_at DESC, id LIMIT ? OFFSET ?`;
    const rows = this.db.prepare(sql).all(...values, filter.limit, filter.offset) as SessionRow[];
    return rows.map(toSession);
  }

  listAsks(sessionId: string): Ask[] {
    return this.statements.asksOfSession.all(sessionId).map(toAsk);
  }

  stats(): StoreStats {
    const sessionsByStatus = Object.fromEntries(SESSION_STATUSES.map((status) => [status, 0])) as Record<SessionStatus, number>;
    for (const row of this.statements.sessionCounts.all()) sessionsByStatus[row.status] = row.count;
    const asksByStatus = Object.fromEntries(ASK_STATUSES.map((status) => [status, 0])) as Record<AskStatus, number>;
    for (const row of this.statements.askCounts.all()) asksByStatus[row.status] = row.count;
    const answered = this.statements.answeredCount.get()?.count ?? 0;
    const medianAnswerMs = answered === 0 ? null : (this.statements.answerDuration.get(Math.floor((answered - 1) / 2))?.duration ?? null);
    const usage = this.statements.usage.get()!;
    const pageCount = this.db.pragma("page_count", { simple: true }) as number;
    const pageSize = this.db.pragma("page_size", { simple: true }) as number;
    return {
      sessionsByStatus,
      asksByStatus,
      medianAnswerMs,
      usage: { inputTokens: usage.input, outputTokens: usage.output, cacheReadTokens: usage.cacheRead, cacheWriteTokens: usage.cacheWrite },
      databaseBytes: pageCount * pageSize,
    };
  }

  purgeEnded(before: number): PurgeCounts {
    return this.db
      .transaction((): PurgeCounts => {
        const counts = { sessions: 0, messages: 0, asks: 0 };
        for (const { id } of this.statements.purgeable.all(before)) {
          counts.messages += this.statements.deleteMessages.run(id).changes;
          this.statements.deleteApiAsks.run(id);
          counts.asks += this.statements.deleteAsks.run(id).changes;
          this.statements.deleteQueued.run(id);
          this.statements.deleteToolCalls.run(id);
          counts.sessions += this.statements.deleteSession.run(id).changes;
        }
        return counts;
      })
      .immediate();
  }

  loadSettings(): Record<string, string> {
    return Object.fromEntries(this.statements.settings.all().map((row) => [row.key, row.value]));
  }

  saveSetting(key: string, value: string): void {
    this.statements.saveSetting.run(key, value);
  }
}
