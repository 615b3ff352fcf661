import type pg from "pg";
import type { PurgeCounts, SessionFilter, StoreStats } from "../../src/ports/maintenance-store.js";
import type { Ask, AskStatus, Session, SessionStatus } from "../../src/ports/session-store.js";
import { translated } from "./postgres-errors.js";
import { run, type Statement } from "./postgres-pool.js";
import { type AskRow, type SessionRow, toAsk, toSession } from "./postgres-rows.js";
import { SQL } from "./postgres-statements.js";

const SESSION_STATUSES: SessionStatus[] = ["idle", "running", "waiting", "failed"];
const ASK_STATUSES: AskStatus[] = ["pending", "answered", "cancelled", "expired"];

// One statement, so one snapshot: the counts, the median and the sizes agree with each other.
// percentile_disc(0.5) is the lower median, the same element the SQLite and memory stores pick.
// The size is the sum of this schema's tables with their indexes and TOAST, not pg_database_size:
// the database may hold other schemas and other applications.
const STATS: Statement = {
  name: "parley-stats",
  text: `SELECT
    (SELECT COALESCE(json_object_agg(status, count), '{}') FROM (SELECT status, COUNT(*) AS count FROM sessions GROUP BY status) AS counted)
      AS sessions_by_status,
    (SELECT COALESCE(json_object_agg(status, count), '{}') FROM (SELECT status, COUNT(*) AS count FROM asks GROUP BY status) AS counted)
      AS asks_by_status,
    (SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY ended_at - created_at) FROM asks WHERE status = 'answered') AS median_answer_ms,
    (SELECT json_build_object('inputTokens', COALESCE(SUM(input_tokens), 0), 'outputTokens', COALESCE(SUM(output_tokens), 0),
       'cacheReadTokens', COALESCE(SUM(cache_read_tokens), 0), 'cacheWriteTokens', COALESCE(SUM(cache_write_tokens), 0)) FROM sessions) AS usage,
    (SELECT COALESCE(SUM(pg_total_relation_size(oid)), 0)::bigint FROM pg_class
      WHERE relnamespace = current_schema()::regnamespace AND relkind = 'r') AS database_bytes`,
};

// FOR UPDATE re-checks the status of a session that changed meanwhile: one that just started a turn is skipped,
// and a turn cannot start on a session while it is being deleted.
// The API's record of an ask goes with the ask: its callback is owed to nobody once the ask is gone.
const PURGE: Statement = {
  name: "parley-purge-ended",
  text: `WITH purgeable AS (SELECT id FROM sessions WHERE status IN ('idle', 'failed') AND updated_at < $1 FOR UPDATE),
    deleted_messages AS (DELETE FROM messages WHERE session_id IN (SELECT id FROM purgeable) RETURNING 1),
    deleted_asks AS (DELETE FROM asks WHERE session_id IN (SELECT id FROM purgeable) RETURNING id),
    deleted_api_asks AS (DELETE FROM api_asks WHERE ask_id IN (SELECT id FROM deleted_asks) RETURNING 1),
    deleted_queued AS (DELETE FROM queued_messages WHERE session_id IN (SELECT id FROM purgeable) RETURNING 1),
    deleted_tool_calls AS (DELETE FROM tool_calls WHERE session_id IN (SELECT id FROM purgeable) RETURNING 1),
    deleted_sessions AS (DELETE FROM sessions WHERE id IN (SELECT id FROM purgeable) RETURNING 1)
  SELECT (SELECT COUNT(*) FROM deleted_sessions)::integer AS sessions, (SELECT COUNT(*) FROM deleted_messages)::integer AS messages,
    (SELECT COUNT(*) FROM deleted_asks)::integer AS asks, (SELECT COUNT(*) FROM deleted_queued)::integer AS queued`,
};

const SETTINGS: Statement = { name: "parley-settings", text: "SELECT key, value FROM settings" };
const SAVE_SETTING: Statement = {
  name: "parley-save-setting",
  text: "INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
};

interface StatsRow {
  sessions_by_status: Partial<Record<SessionStatus, number>>;
  asks_by_status: Partial<Record<AskStatus, number>>;
  median_answer_ms: number | null;
  usage: StoreStats["usage"];
  database_bytes: number;
}

/** The read-mostly queries behind /parley: listing, stats, purge and settings. Each is one statement. */
export class PostgresAdminQueries {
  constructor(private readonly pool: pg.Pool) {}

  /** Builds the filtered listing; the WHERE clause only ever holds fixed fragments with bound values. */
  async listSessions(filter: SessionFilter): Promise<Session[]> {
    const where: string[] = [];
    const values: Array<string | number> = [];
    const bind = (fragment: string, value: string) => {
      values.push(value);
      where.push(`${fragment} = $${values.length}`);
    };
    if (filter.status) bind("status", filter.status);
    if (filter.channel) bind("channel", filter.channel);
    if (filter.ownerId) bind("owner_id", filter.ownerId);
    values.push(filter.limit, filter.offset);
    const sql = `SELECT * FROM sessions ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY updated_at DESC, id LIMIT $${values.length - 1} OFFSET $${values.length}`;
    const { rows } = await translated(() => this.pool.query<SessionRow>(sql, values));
    return rows.map(toSession);
  }

  async listAsks(sessionId: string): Promise<Ask[]> {
    const { rows } = await translated(() => run<AskRow>(this.pool, SQL.asksOfSession, [sessionId]));
    return rows.map(toAsk);
  }

  async stats(): Promise<StoreStats> {
    const row = await translated(async () => (await run<StatsRow>(this.pool, STATS, [])).rows[0]!);
    const sessionsByStatus = Object.fromEntries(SESSION_STATUSES.map((status) => [status, row.sessions_by_status[status] ?? 0]));
    const asksByStatus = Object.fromEntries(ASK_STATUSES.map((status) => [status, row.asks_by_status[status] ?? 0]));
    return {
      sessionsByStatus: sessionsByStatus as StoreStats["sessionsByStatus"],
      asksByStatus: asksByStatus as StoreStats["asksByStatus"],
      medianAnswerMs: row.median_answer_ms,
      usage: row.usage,
      databaseBytes: row.database_bytes,
    };
  }

  async purgeEnded(before: number): Promise<PurgeCounts> {
    const row = await translated(async () => (await run<PurgeCounts>(this.pool, PURGE, [before])).rows[0]!);
    return { sessions: row.sessions, messages: row.messages, asks: row.asks };
  }

  async loadSettings(): Promise<Record<string, string>> {
    const { rows } = await translated(() => run<{ key: string; value: string }>(this.pool, SETTINGS, []));
    return Object.fromEntries(rows.map((row) => [row.key, row.value]));
  }

  async saveSetting(key: string, value: string): Promise<void> {
    await translated(() => run(this.pool, SAVE_SETTING, [key, value]));
  }
}
