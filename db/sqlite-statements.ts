import type Database from "better-sqlite3";
import type { ChatMessage } from "../src/ports/model-client.js";
import type { Ask, NewAsk } from "../src/ports/session-store.js";
import { RECORD_VERSION, writeSpec } from "./records.js";
import { ASK_COLUMNS, type AskRow, SESSION_COLUMNS, type SessionRow, type ToolCallRow } from "./sqlite-rows.js";

/** The select lists of the array reads (see `namedRow`): a session's columns, an ask's, each under its table's name. */
const SESSION_LIST = SESSION_COLUMNS.map((column) => `sessions.${column}`).join(", ");
const ASK_LIST = ASK_COLUMNS.map((column) => `asks.${column}`).join(", ");

interface StepParameters {
  id: string;
  added: number;
  /** 1 when the step holds an assistant message (a model iteration), else 0. */
  iteration: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  now: number;
}

/** A lease or claim request as statement parameters; `id` names the row (session, ask or reply key). */
export interface ClaimParameters {
  id: string;
  owner: string;
  until: number;
  now: number;
  displace: string | null;
}

/** A new ask as `insertAsk`'s parameters, its post claim with it. */
export function newAskParameters(ask: NewAsk, sessionId: string, now: number) {
  return {
    id: ask.id,
    sessionId,
    toolUseId: ask.toolUseId,
    spec: writeSpec(ask.spec),
    siblings: JSON.stringify(ask.siblingResults),
    deadline: ask.deadline,
    now,
    postOwner: ask.claim?.owner ?? null,
    postUntil: ask.claim?.until ?? null,
  };
}

/** Every statement of the hot path, prepared once on the store's connection. */
export function prepareStatements(db: Database.Database) {
  return {
    claimEvent: db.prepare("INSERT OR IGNORE INTO processed_events (event_id, at) VALUES (?, ?)"),
    hasEvent: db.prepare<[string], { found: number }>("SELECT 1 AS found FROM processed_events WHERE event_id = ?"),
    insertSession: db.prepare(
      `INSERT OR IGNORE INTO sessions (id, v, conversation_key, platform, workspace, channel, thread, owner_id, status, created_at, updated_at)
       VALUES (@id, ${RECORD_VERSION}, @key, @platform, @workspace, @channel, @thread, @owner, 'idle', @now, @now)`,
    ),
    // Array reads (raw mode): sessionRowOf / askRowOf name their values.
    sessionById: db.prepare<[string], unknown[]>(`SELECT ${SESSION_LIST} FROM sessions WHERE id = ?`).raw(true),
    sessionByKey: db.prepare<[string], unknown[]>(`SELECT ${SESSION_LIST} FROM sessions WHERE conversation_key = ?`).raw(true),
    ping: db.prepare<[], { one: number }>("SELECT 1 AS one FROM sessions LIMIT 1"),
    // Only for top-level DM messages; no index: a scan of sessions is well under a millisecond per thousand rows.
    waitingSessionIn: db.prepare<[string, string, string], SessionRow>(
      `SELECT * FROM sessions WHERE status = 'waiting' AND platform = ? AND workspace = ? AND channel = ?
       ORDER BY updated_at DESC, id LIMIT 1`,
    ),
    messages: db
      .prepare<[string], [number, ChatMessage["role"], string]>("SELECT v, role, content FROM messages WHERE session_id = ? ORDER BY seq")
      .raw(true),
    insertMessage: db.prepare(`INSERT INTO messages (session_id, seq, v, role, content) VALUES (?, ?, ${RECORD_VERSION}, ?, ?)`),
    beginTurn: db.prepare(
      `UPDATE sessions SET status = 'running', turn_count = turn_count + 1, turn_asks = 0, turn_iterations = 0,
         stop_requested = 0, last_error = NULL, message_count = message_count + ?, updated_at = ? WHERE id = ?`,
    ),
    queue: db.prepare(`INSERT INTO queued_messages (session_id, v, content) VALUES (?, ${RECORD_VERSION}, ?)`),
    queued: db.prepare<[string], { id: number; v: number; content: string }>(
      "SELECT id, v, content FROM queued_messages WHERE session_id = ? ORDER BY id",
    ),
    dequeue: db.prepare("DELETE FROM queued_messages WHERE session_id = ?"),
    // Each step bumps the counters and returns the new message count, so no read precedes the inserts.
    step: db.prepare<StepParameters, { message_count: number }>(
      `UPDATE sessions SET message_count = message_count + @added, turn_iterations = turn_iterations + @iteration,
         input_tokens = input_tokens + @input, output_tokens = output_tokens + @output,
         cache_read_tokens = cache_read_tokens + @cacheRead, cache_write_tokens = cache_write_tokens + @cacheWrite,
         updated_at = @now WHERE id = @id RETURNING message_count`,
    ),
    stepSuspend: db.prepare<StepParameters, { message_count: number }>(
      `UPDATE sessions SET message_count = message_count + @added, turn_iterations = turn_iterations + @iteration,
         input_tokens = input_tokens + @input, output_tokens = output_tokens + @output,
         cache_read_tokens = cache_read_tokens + @cacheRead, cache_write_tokens = cache_write_tokens + @cacheWrite,
         updated_at = @now, status = 'waiting', turn_asks = turn_asks + 1, last_outcome = 'suspended', recovery_attempts = 0,
         lease_owner = NULL, lease_until = NULL
       WHERE id = @id RETURNING message_count`,
    ),
    // A turn that ends with none queued after it drops its lease; one whose queued messages start the next keeps it.
    endTurn: db.prepare<{ id: string; status: string; outcome: string; error: string | null; release: number }>(
      `UPDATE sessions SET status = @status, last_outcome = @outcome, last_error = @error, recovery_attempts = 0,
         lease_owner = CASE WHEN @release = 1 THEN NULL ELSE lease_owner END,
         lease_until = CASE WHEN @release = 1 THEN NULL ELSE lease_until END
       WHERE id = @id`,
    ),
    insertReply: db.prepare<[string, string, string, number, string | null, number | null]>(
      "INSERT OR IGNORE INTO pending_replies (key, session_id, text, created_at, post_owner, post_until) VALUES (?, ?, ?, ?, ?, ?)",
    ),
    deleteReply: db.prepare<[string]>("DELETE FROM pending_replies WHERE key = ?"),
    // The session comes back with its lease: a turn starts on this one statement.
    takeTurn: db
      .prepare<ClaimParameters, unknown[]>(
        `UPDATE sessions SET lease_owner = @owner, lease_until = @until
         WHERE id = @id AND status = 'running'
           AND (lease_owner IS NULL OR lease_owner = @owner OR lease_until <= @now OR lease_owner = @displace)
         RETURNING ${SESSION_COLUMNS.join(", ")}`,
      )
      .raw(true),
    leaseHolder: db.prepare<[string], { lease_owner: string | null; status: string }>(
      "SELECT lease_owner, status FROM sessions WHERE id = ?",
    ),
    releaseTurn: db.prepare<[string, string]>(
      "UPDATE sessions SET lease_owner = NULL, lease_until = NULL WHERE id = ? AND lease_owner = ?",
    ),
    insertAsk: db.prepare<ReturnType<typeof newAskParameters>>(
      `INSERT INTO asks (id, v, session_id, tool_use_id, spec, status, sibling_results, deadline, created_at, post_owner, post_until)
       VALUES (@id, ${RECORD_VERSION}, @sessionId, @toolUseId, @spec, 'pending', @siblings, @deadline, @now, @postOwner, @postUntil)`,
    ),
    // A post claim is granted as a turn lease is (free, ours, expired, or its holder is known dead), while there is
    // still something to post.
    claimCardPost: db.prepare<ClaimParameters>(
      `UPDATE asks SET post_owner = @owner, post_until = @until
       WHERE id = @id AND status = 'pending' AND card_ref IS NULL
         AND (post_owner IS NULL OR post_owner = @owner OR post_until <= @now OR post_owner = @displace)`,
    ),
    cardPostHolder: db.prepare<[string], { post_owner: string | null }>(
      "SELECT post_owner FROM asks WHERE id = ? AND status = 'pending' AND card_ref IS NULL",
    ),
    claimReplyPost: db.prepare<ClaimParameters>(
      `UPDATE pending_replies SET post_owner = @owner, post_until = @until
       WHERE key = @id AND (post_owner IS NULL OR post_owner = @owner OR post_until <= @now OR post_owner = @displace)`,
    ),
    replyPostHolder: db.prepare<[string], { post_owner: string | null }>("SELECT post_owner FROM pending_replies WHERE key = ?"),
    askById: db.prepare<[string], unknown[]>(`SELECT ${ASK_LIST} FROM asks WHERE id = ?`).raw(true),
    pendingAsk: db
      .prepare<[string], unknown[]>(`SELECT ${ASK_LIST} FROM asks WHERE session_id = ? AND status = 'pending' LIMIT 1`)
      .raw(true),
    claimAsk: db
      .prepare<{ id: string; status: string; answer: string | null; by: string | null; now: number }, unknown[]>(
        `UPDATE asks SET status = @status, answer = @answer, answered_by = @by, ended_at = @now
         WHERE id = @id AND status = 'pending' RETURNING ${ASK_COLUMNS.join(", ")}`,
      )
      .raw(true),
    resumeSession: db.prepare<
      {
        id: string;
        status: string | null;
        added: number;
        outcome: string | null;
        now: number;
        leaseOwner: string | null;
        leaseUntil: number | null;
      },
      { message_count: number }
    >(
      `UPDATE sessions SET status = COALESCE(@status, status), message_count = message_count + @added, last_outcome = COALESCE(@outcome, last_outcome),
         recovery_attempts = 0, updated_at = @now, lease_owner = COALESCE(@leaseOwner, lease_owner),
         lease_until = COALESCE(@leaseUntil, lease_until)
       WHERE id = @id RETURNING message_count`,
    ),
    // The ask's columns, then its session's (askRowOf, then sessionRowOf from ASK_COLUMNS.length).
    askWithSession: db
      .prepare<[string], unknown[]>(
        `SELECT ${ASK_LIST}, ${SESSION_LIST} FROM asks JOIN sessions ON sessions.id = asks.session_id WHERE asks.id = ?`,
      )
      .raw(true),
    stopRequested: db.prepare<[string], { stop_requested: number }>("SELECT stop_requested FROM sessions WHERE id = ?"),
    setCardRef: db.prepare<[string, string], { status: Ask["status"] }>("UPDATE asks SET card_ref = ? WHERE id = ? RETURNING status"),
    setCardRefAndDeadline: db.prepare<[string, number, string], { status: Ask["status"] }>(
      "UPDATE asks SET card_ref = ?, deadline = ? WHERE id = ? RETURNING status",
    ),
    recordCardSettled: db.prepare<[number, string]>("UPDATE asks SET settled_at = ? WHERE id = ? AND status != 'pending'"),
    requestStop: db.prepare("UPDATE sessions SET stop_requested = 1 WHERE id = ?"),
    waitOnExternal: db.prepare<[number, string]>("UPDATE sessions SET status = 'waiting', updated_at = ? WHERE id = ?"),
    askForToolUse: db.prepare<[string, string], AskRow>(
      "SELECT * FROM asks WHERE session_id = ? AND tool_use_id = ? ORDER BY created_at DESC, id DESC LIMIT 1",
    ),
    toolCall: db.prepare<[string, string], ToolCallRow>("SELECT * FROM tool_calls WHERE session_id = ? AND tool_use_id = ?"),
    startToolCall: db.prepare(
      `INSERT OR IGNORE INTO tool_calls (session_id, tool_use_id, v, name, arguments_hash, status, started_at)
       VALUES (@sessionId, @toolUseId, ${RECORD_VERSION}, @name, @argumentsHash, 'started', @now)`,
    ),
    finishToolCall: db.prepare(
      "UPDATE tool_calls SET status = 'finished', result = ?, finished_at = ? WHERE session_id = ? AND tool_use_id = ?",
    ),
    audit: db.prepare("INSERT INTO audit (at, actor, action, target, outcome) VALUES (@at, @actor, @action, @target, @outcome)"),
  };
}

/** The prepared hot-path statements. */
export type Statements = ReturnType<typeof prepareStatements>;
