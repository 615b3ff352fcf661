import { heldUntil, type NewAsk, type TurnLease } from "../../src/ports/session-store.js";
import type { Statement } from "./postgres-pool.js";
import { RECORD_VERSION, writeSpec } from "./postgres-rows.js";

const statement = (name: string, text: string): Statement => ({ name: `parley-${name}`, text });

/** A new ask as `insertAsk`'s values, its post claim with it. */
export function newAskValues(ask: NewAsk, sessionId: string, now: number): unknown[] {
  const siblings = JSON.stringify(ask.siblingResults);
  return [
    ask.id,
    sessionId,
    ask.toolUseId,
    writeSpec(ask.spec),
    siblings,
    ask.deadline,
    now,
    ask.claim?.owner ?? null,
    ask.claim?.until ?? null,
  ];
}

/** A lease or claim request as statement values: the row's id, owner, until, now, and the holder to displace. */
export function claimValues(id: string, lease: TurnLease): unknown[] {
  return [id, lease.owner, heldUntil(lease).until, lease.now, lease.displace ?? null];
}

/** Every statement of the hot path, prepared once per connection by name. */
export const SQL = {
  claimEvent: statement("claim-event", "INSERT INTO processed_events (event_id, at) VALUES ($1, $2) ON CONFLICT DO NOTHING"),
  hasEvent: statement("has-event", "SELECT 1 FROM processed_events WHERE event_id = $1"),
  pruneEvents: statement("prune-events", "DELETE FROM processed_events WHERE at < $1"),
  // No conflict target: a clash on the id or on the conversation both leave the existing row alone.
  insertSession: statement(
    "insert-session",
    `INSERT INTO sessions (id, v, conversation_key, platform, workspace, channel, thread, owner_id, status, created_at, updated_at)
     VALUES ($1, ${RECORD_VERSION}, $2, $3, $4, $5, $6, $7, 'idle', $8, $8) ON CONFLICT DO NOTHING RETURNING *`,
  ),
  sessionById: statement("session-by-id", "SELECT * FROM sessions WHERE id = $1"),
  // The row lock that serialises turn starts across processes; the second waits, then reads the first's result.
  lockSession: statement("lock-session", "SELECT v, status, message_count FROM sessions WHERE id = $1 FOR UPDATE"),
  sessionByKey: statement("session-by-key", "SELECT * FROM sessions WHERE conversation_key = $1"),
  ping: statement("ping", "SELECT 1 AS one FROM sessions LIMIT 1"),
  recentSessions: statement(
    "recent-sessions",
    "SELECT * FROM sessions WHERE platform = $1 AND updated_at >= $2 ORDER BY updated_at DESC, id LIMIT $3",
  ),
  waitingSessionIn: statement(
    "waiting-session-in",
    `SELECT * FROM sessions WHERE status = 'waiting' AND platform = $1 AND workspace = $2 AND channel = $3
     ORDER BY updated_at DESC, id LIMIT 1`,
  ),
  sessionsByStatus: statement("sessions-by-status", "SELECT * FROM sessions WHERE status = $1 ORDER BY updated_at, id"),
  // The sweeper reads this every few seconds: the status is written out so the partial index applies.
  runningSessions: statement("running-sessions", "SELECT * FROM sessions WHERE status = 'running' ORDER BY updated_at, id"),
  messages: statement("messages", "SELECT v, role, content FROM messages WHERE session_id = $1 ORDER BY seq"),
  // Any number of new messages in one statement: roles and contents as two parallel arrays, numbered from $2.
  insertMessages: statement(
    "insert-messages",
    `INSERT INTO messages (session_id, seq, v, role, content)
     SELECT $1, $2::integer + added.position::integer - 1, ${RECORD_VERSION}, added.role, added.content
     FROM unnest($3::text[], $4::text[]) WITH ORDINALITY AS added (role, content, position)`,
  ),
  beginTurn: statement(
    "begin-turn",
    `UPDATE sessions SET status = 'running', turn_count = turn_count + 1, turn_asks = 0, turn_iterations = 0,
       stop_requested = FALSE, last_error = NULL, message_count = message_count + $2, updated_at = $3 WHERE id = $1`,
  ),
  queue: statement("queue", `INSERT INTO queued_messages (session_id, v, content) VALUES ($1, ${RECORD_VERSION}, $2)`),
  dequeue: statement("dequeue", "DELETE FROM queued_messages WHERE session_id = $1 RETURNING id, v, content"),
  // Each step bumps the counters and returns the new message count, so no read precedes the inserts;
  // the UPDATE also takes the session's row lock for the rest of the transaction.
  step: statement(
    "step",
    `UPDATE sessions SET message_count = message_count + $2, turn_iterations = turn_iterations + $8,
       input_tokens = input_tokens + $3, output_tokens = output_tokens + $4,
       cache_read_tokens = cache_read_tokens + $5, cache_write_tokens = cache_write_tokens + $6,
       updated_at = $7 WHERE id = $1 RETURNING message_count`,
  ),
  stepSuspend: statement(
    "step-suspend",
    `UPDATE sessions SET message_count = message_count + $2, turn_iterations = turn_iterations + $8,
       input_tokens = input_tokens + $3, output_tokens = output_tokens + $4,
       cache_read_tokens = cache_read_tokens + $5, cache_write_tokens = cache_write_tokens + $6,
       updated_at = $7, status = 'waiting', turn_asks = turn_asks + 1, last_outcome = 'suspended', recovery_attempts = 0,
       lease_owner = NULL, lease_until = NULL
     WHERE id = $1 RETURNING message_count`,
  ),
  insertReply: statement(
    "insert-reply",
    `INSERT INTO pending_replies (key, session_id, text, created_at, post_owner, post_until) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (key) DO NOTHING`,
  ),
  // A post claim is granted as a turn lease is (free, ours, expired, or its holder is known dead), while there is
  // still something to post.
  claimCardPost: statement(
    "claim-card-post",
    `UPDATE asks SET post_owner = $2, post_until = $3
     WHERE id = $1 AND status = 'pending' AND card_ref IS NULL
       AND (post_owner IS NULL OR post_owner = $2 OR post_until <= $4 OR post_owner = $5)`,
  ),
  cardPostHolder: statement("card-post-holder", "SELECT post_owner FROM asks WHERE id = $1 AND status = 'pending' AND card_ref IS NULL"),
  claimReplyPost: statement(
    "claim-reply-post",
    `UPDATE pending_replies SET post_owner = $2, post_until = $3
     WHERE key = $1 AND (post_owner IS NULL OR post_owner = $2 OR post_until <= $4 OR post_owner = $5)`,
  ),
  replyPostHolder: statement("reply-post-holder", "SELECT post_owner FROM pending_replies WHERE key = $1"),
  deleteReply: statement("delete-reply", "DELETE FROM pending_replies WHERE key = $1"),
  takeTurn: statement(
    "take-turn",
    `UPDATE sessions SET lease_owner = $2, lease_until = $3
     WHERE id = $1 AND status = 'running'
       AND (lease_owner IS NULL OR lease_owner = $2 OR lease_until <= $4 OR lease_owner = $5)
     RETURNING *`,
  ),
  leaseHolder: statement("lease-holder", "SELECT lease_owner, status FROM sessions WHERE id = $1"),
  releaseTurn: statement("release-turn", "UPDATE sessions SET lease_owner = NULL, lease_until = NULL WHERE id = $1 AND lease_owner = $2"),
  pendingReplies: statement(
    "pending-replies",
    "SELECT key, session_id, text, created_at FROM pending_replies WHERE created_at < $1 ORDER BY created_at, key LIMIT $2",
  ),
  // A turn that ends with none queued after it ($5) drops its lease; one whose queued messages start the next keeps it.
  endTurn: statement(
    "end-turn",
    `UPDATE sessions SET status = $2, last_outcome = $3, last_error = $4, recovery_attempts = 0,
       lease_owner = CASE WHEN $5 THEN NULL ELSE lease_owner END, lease_until = CASE WHEN $5 THEN NULL ELSE lease_until END
     WHERE id = $1`,
  ),
  insertAsk: statement(
    "insert-ask",
    `INSERT INTO asks (id, v, session_id, tool_use_id, spec, status, sibling_results, deadline, created_at, post_owner, post_until)
     VALUES ($1, ${RECORD_VERSION}, $2, $3, $4, 'pending', $5, $6, $7, $8, $9)`,
  ),
  askById: statement("ask-by-id", "SELECT * FROM asks WHERE id = $1"),
  pendingAsk: statement("pending-ask", "SELECT * FROM asks WHERE session_id = $1 AND status = 'pending' LIMIT 1"),
  // The compare-and-set and everything that goes with it, in one statement (one transaction, one round trip on
  // every tap): a concurrent claimer waits on the ask's row lock, then finds it no longer pending and writes nothing.
  // The result message takes the seq the session update hands back; the audit row is written only for the winner.
  resolveAsk: statement(
    "resolve-ask",
    `WITH claimed AS (
       UPDATE asks SET status = $2, answer = $3, answered_by = $4, ended_at = $5 WHERE id = $1 AND status = 'pending' RETURNING *
     ), resumed AS (
       UPDATE sessions SET status = COALESCE($6, sessions.status), message_count = message_count + (CASE WHEN $8::text IS NULL THEN 0 ELSE 1 END),
         last_outcome = COALESCE($7, last_outcome), recovery_attempts = 0, updated_at = $5,
         lease_owner = COALESCE($14::text, lease_owner), lease_until = COALESCE($15::bigint, lease_until)
       FROM claimed WHERE sessions.id = claimed.session_id RETURNING sessions.id, sessions.message_count
     ), appended AS (
       -- An approval appends nothing ($8 null): its decision is read when the turn runs the call.
       INSERT INTO messages (session_id, seq, v, role, content)
       SELECT id, message_count - 1, ${RECORD_VERSION}, 'user', $8 FROM resumed WHERE $8::text IS NOT NULL
     ), audited AS (
       INSERT INTO audit (at, actor, action, target, outcome) SELECT $9, $10, $11, $12, $13 FROM claimed
     )
     SELECT claimed.*, (SELECT COUNT(*) FROM resumed)::integer AS resumed,
       pg_notify('parley:' || current_schema(), 'ask:' || claimed.id) AS notified
     FROM claimed`,
  ),
  askWithSession: statement(
    "ask-with-session",
    "SELECT asks.*, row_to_json(sessions) AS session FROM asks JOIN sessions ON sessions.id = asks.session_id WHERE asks.id = $1",
  ),
  stopRequested: statement("stop-requested", "SELECT stop_requested FROM sessions WHERE id = $1"),
  setCardRef: statement("set-card-ref", "UPDATE asks SET card_ref = $2, deadline = COALESCE($3, deadline) WHERE id = $1 RETURNING status"),
  recordCardSettled: statement("record-card-settled", "UPDATE asks SET settled_at = $2 WHERE id = $1 AND status <> 'pending'"),
  unsettled: statement(
    "unsettled",
    `SELECT * FROM asks WHERE status <> 'pending' AND card_ref IS NOT NULL AND settled_at IS NULL AND ended_at >= $1
     ORDER BY ended_at, id LIMIT $2`,
  ),
  unposted: statement("unposted", "SELECT * FROM asks WHERE status = 'pending' AND card_ref IS NULL ORDER BY deadline, id"),
  expired: statement(
    "expired",
    "SELECT * FROM asks WHERE status = 'pending' AND deadline <= $1 AND card_ref IS NOT NULL ORDER BY deadline, id LIMIT $2",
  ),
  // The notice leaves on commit: a process running the turn hears it at once (postgres-changes.ts).
  requestStop: statement(
    "request-stop",
    `WITH stopped AS (UPDATE sessions SET stop_requested = TRUE WHERE id = $1 RETURNING id)
     SELECT pg_notify('parley:' || current_schema(), 'stop:' || id) FROM stopped`,
  ),
  countRecovery: statement(
    "count-recovery",
    "UPDATE sessions SET recovery_attempts = recovery_attempts + 1 WHERE id = $1 RETURNING recovery_attempts",
  ),
  asksOfSession: statement("asks-of-session", "SELECT * FROM asks WHERE session_id = $1 ORDER BY created_at, id"),
  askForToolUse: statement(
    "ask-for-tool-use",
    "SELECT * FROM asks WHERE session_id = $1 AND tool_use_id = $2 ORDER BY created_at DESC, id DESC LIMIT 1",
  ),
  toolCall: statement("tool-call", "SELECT * FROM tool_calls WHERE session_id = $1 AND tool_use_id = $2"),
  startToolCall: statement(
    "start-tool-call",
    `INSERT INTO tool_calls (session_id, tool_use_id, v, name, arguments_hash, status, started_at)
     VALUES ($1, $2, ${RECORD_VERSION}, $3, $4, 'started', $5) ON CONFLICT DO NOTHING`,
  ),
  finishToolCall: statement(
    "finish-tool-call",
    "UPDATE tool_calls SET status = 'finished', result = $3, finished_at = $4 WHERE session_id = $1 AND tool_use_id = $2",
  ),
  audit: statement("audit", "INSERT INTO audit (at, actor, action, target, outcome) VALUES ($1, $2, $3, $4, $5)"),
} as const;
