import type pg from "pg";
import type { ApiStore, ExternalAsk, ExternalCreate, NewExternalAsk, StoredToken } from "../../src/ports/api-store.js";
import { asAskId, asSessionId } from "../../src/ports/ids.js";
import { type Ask, conversationKey, type NewSession, type SessionStatus } from "../../src/ports/session-store.js";
import { type ApiAskRow, type TokenRow, toExternal, toToken } from "../api-rows.js";
import { translated } from "./postgres-errors.js";
import { run, type Statement, transaction } from "./postgres-pool.js";
import { type AskRow, checkVersion, toAsk } from "./postgres-rows.js";
import { newAskValues, SQL } from "./postgres-statements.js";

const statement = (name: string, text: string): Statement => ({ name: `parley-api-${name}`, text });

const API_SQL = {
  // The row lock that serialises this with turn starts and answers on the same thread, across processes.
  lockSessionByKey: statement("lock-session-by-key", "SELECT id, v, status FROM sessions WHERE conversation_key = $1 FOR UPDATE"),
  // Only the status moves: turn counters and history belong to the agent's turns, and no turn runs here.
  setWaiting: statement("set-waiting", "UPDATE sessions SET status = 'waiting', updated_at = $2 WHERE id = $1"),
  insert: statement(
    "insert",
    `INSERT INTO api_asks (ask_id, token, idempotency_key, request_hash, metadata, callback_url)
     VALUES ($1, $2, $3, $4, $5, $6)`,
  ),
  byId: statement("by-id", "SELECT * FROM api_asks WHERE ask_id = $1"),
  byKey: statement("by-key", "SELECT * FROM api_asks WHERE token = $1 AND idempotency_key = $2"),
  // Written out as the partial index's predicate so the planner uses it; the asks row says whether the ask ended.
  due: statement(
    "due",
    `SELECT asks.*, api_asks.* FROM api_asks JOIN asks ON asks.id = api_asks.ask_id
     WHERE api_asks.callback_url IS NOT NULL AND api_asks.callback_done_at IS NULL
       AND (api_asks.callback_next_at IS NULL OR api_asks.callback_next_at <= $1) AND asks.status <> 'pending'
     ORDER BY asks.ended_at, asks.id LIMIT $2`,
  ),
  // A concurrent taker waits on the row lock, then re-reads the due time this one moved on, and updates nothing.
  take: statement(
    "take",
    `UPDATE api_asks SET callback_attempts = callback_attempts + 1, callback_next_at = $3
     WHERE ask_id = $1 AND callback_done_at IS NULL AND (callback_next_at IS NULL OR callback_next_at <= $2)
     RETURNING callback_attempts`,
  ),
  // The first outcome stands: a late finisher of a taken-over attempt does not overwrite it.
  finish: statement(
    "finish",
    "UPDATE api_asks SET callback_done_at = $3, callback_outcome = $2 WHERE ask_id = $1 AND callback_done_at IS NULL",
  ),
  // The name is the key: a name ever used, revoked or not, refuses the insert.
  saveToken: statement(
    "save-token",
    `INSERT INTO api_tokens (name, secret_hash, created_by, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT DO NOTHING`,
  ),
  revokeToken: statement("revoke-token", "UPDATE api_tokens SET revoked_at = $2 WHERE name = $1 AND revoked_at IS NULL"),
  tokens: statement("tokens", "SELECT * FROM api_tokens ORDER BY created_at, name"),
} as const;

/** The session an external ask binds to: all the creation needs to read of it. */
interface BoundSession {
  id: string;
  status: SessionStatus;
}

/** The ApiStore on PostgreSQL: a helper of PostgresSessionStore sharing its pool, like PostgresAdminQueries. */
export class PostgresApiStore implements ApiStore {
  constructor(private readonly pool: pg.Pool) {}

  /** One transaction; a concurrent retry under the same key that committed first makes this one a replay. */
  async createExternalAsk(input: NewExternalAsk): Promise<ExternalCreate> {
    try {
      return await translated(() => transaction(this.pool, (client) => create(client, input)));
    } catch (error) {
      const key = input.idempotencyKey;
      const earlier = key !== null && isIdempotencyClash(error) ? await this.findByIdempotencyKey(input.token, key) : undefined;
      if (earlier) return { kind: "replayed", external: earlier };
      throw error;
    }
  }

  /** The API's record of one ask. */
  async getExternalAsk(askId: string): Promise<ExternalAsk | undefined> {
    const row = (await this.query<ApiAskRow>(API_SQL.byId, [askId])).rows[0];
    return row ? toExternal(row) : undefined;
  }

  /** The ask a token opened under an idempotency key. */
  async findByIdempotencyKey(token: string, key: string): Promise<ExternalAsk | undefined> {
    const row = (await this.query<ApiAskRow>(API_SQL.byKey, [token, key])).rows[0];
    return row ? toExternal(row) : undefined;
  }

  /** Ended asks owed a callback whose attempt is due, oldest ending first. */
  async listDueCallbacks(now: number, limit: number): Promise<Array<{ external: ExternalAsk; ask: Ask }>> {
    const { rows } = await this.query<AskRow & ApiAskRow>(API_SQL.due, [now, limit]);
    return rows.map((row) => ({ external: toExternal(row), ask: toAsk(row) }));
  }

  /** Compare-and-set on the due time: the attempt's number, or undefined when another caller took it. */
  async takeCallback(askId: string, now: number, retryAt: number): Promise<number | undefined> {
    return (await this.query<{ callback_attempts: number }>(API_SQL.take, [askId, now, retryAt])).rows[0]?.callback_attempts;
  }

  /** Records the callback's outcome; it is never due again. */
  async finishCallback(askId: string, outcome: string, now: number): Promise<void> {
    await this.query(API_SQL.finish, [askId, outcome, now]);
  }

  /** Stores a token; false when the name was ever used. */
  async saveToken(token: StoredToken): Promise<boolean> {
    const values = [token.name, token.secretHash, token.createdBy, token.createdAt, token.revokedAt];
    return (await this.query(API_SQL.saveToken, values)).rowCount === 1;
  }

  /** Revokes the live token of that name; false when there is none. */
  async revokeToken(name: string, now: number): Promise<boolean> {
    return (await this.query(API_SQL.revokeToken, [name, now])).rowCount === 1;
  }

  /** Every token, revoked ones included, oldest first. */
  async listTokens(): Promise<StoredToken[]> {
    return (await this.query<TokenRow>(API_SQL.tokens, [])).rows.map(toToken);
  }

  private async query<Row extends pg.QueryResultRow>(sql: Statement, values: unknown[]): Promise<pg.QueryResult<Row>> {
    return translated(() => run<Row>(this.pool, sql, values));
  }
}

/** The body of createExternalAsk's transaction. */
async function create(client: pg.PoolClient, input: NewExternalAsk): Promise<ExternalCreate> {
  const earlier = await replayOf(client, input);
  if (earlier) return { kind: "replayed", external: earlier };
  const session = await bindSession(client, input.session);
  if (session.status !== "idle" && session.status !== "failed") {
    // The wait for the session's lock may have been on a concurrent retry of this very request: a replay, not busy.
    const retried = await replayOf(client, input);
    return retried ? { kind: "replayed", external: retried } : { kind: "busy" };
  }
  const { ask, now } = input;
  await run(client, SQL.insertAsk, newAskValues(ask, session.id, now));
  await run(client, API_SQL.setWaiting, [session.id, now]);
  const metadata = input.metadata === null || input.metadata === undefined ? null : JSON.stringify(input.metadata);
  const record = [ask.id, input.token, input.idempotencyKey, input.requestHash, metadata, input.callbackUrl];
  await run(client, API_SQL.insert, record);
  return { kind: "created", askId: asAskId(ask.id), sessionId: asSessionId(session.id) };
}

/** The token's earlier ask under this request's idempotency key, read on the transaction's connection. */
async function replayOf(client: pg.PoolClient, input: NewExternalAsk): Promise<ExternalAsk | undefined> {
  if (input.idempotencyKey === null) return undefined;
  const row = (await run<ApiAskRow>(client, API_SQL.byKey, [input.token, input.idempotencyKey])).rows[0];
  return row ? toExternal(row) : undefined;
}

/** Locks the conversation's session, creating it as createSession does when there is none. */
async function bindSession(client: pg.PoolClient, session: NewSession): Promise<BoundSession> {
  const key = conversationKey(session.conversation);
  const existing = await lockSession(client, key);
  if (existing) return existing;
  const { platform, workspace, channel, thread } = session.conversation;
  const values = [session.id, key, platform, workspace, channel, thread, session.ownerId, session.now];
  const inserted = (await run<BoundSession>(client, SQL.insertSession, values)).rows[0];
  if (inserted) return { id: inserted.id, status: inserted.status };
  // A concurrent creator for the same thread committed while our insert waited: this statement sees its row.
  const raced = await lockSession(client, key);
  if (!raced) throw new Error(`session id ${session.id} is already bound to another conversation`);
  return raced;
}

async function lockSession(client: pg.PoolClient, key: string): Promise<BoundSession | undefined> {
  const row = (await run<BoundSession & { v: number }>(client, API_SQL.lockSessionByKey, [key])).rows[0];
  if (!row) return undefined;
  checkVersion("session", row.v);
  return { id: row.id, status: row.status };
}

/** A unique violation on the idempotency index: another transaction committed the same token and key first. */
function isIdempotencyClash(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code, constraint } = error as Error & { code?: unknown; constraint?: unknown };
  return code === "23505" && constraint === "api_asks_idempotency";
}
