import type Database from "better-sqlite3";
import type { ExternalAsk, ExternalCreate, NewExternalAsk, StoredToken } from "../src/ports/api-store.js";
import type { PurgeCounts, SessionFilter, Storage, StoreStats } from "../src/ports/maintenance-store.js";
import type { ChatMessage, ToolResultBlock } from "../src/ports/model-client.js";
import type {
  Ask,
  AskResolution,
  AuditEntry,
  ConversationRef,
  NewAsk,
  NewSession,
  NewToolCall,
  PendingReply,
  Session,
  SessionStatus,
  StartOrQueue,
  Step,
  StepResult,
  ToolCallRecord,
  TurnLease,
} from "../src/ports/session-store.js";
import { conversationKey } from "../src/ports/session-store.js";
import { openDatabase } from "./open-database.js";
import {
  checkVersion,
  RECORD_VERSION,
  readAnswer,
  readContent,
  readSiblingResults,
  readSpec,
  readToolResult,
  writeContent,
  writeSpec,
  writeToolResult,
} from "./records.js";
import { SqliteAdminQueries } from "./sqlite-admin-queries.js";
import { SqliteApiStore } from "./sqlite-api-store.js";
import { translateStoreErrors } from "./sqlite-errors.js";
import { WalCheckpointer } from "./wal-checkpointer.js";

interface SessionRow {
  id: string;
  v: number;
  platform: string;
  workspace: string;
  channel: string;
  thread: string;
  owner_id: string;
  status: SessionStatus;
  last_outcome: Session["lastOutcome"];
  last_error: string | null;
  turn_count: number;
  turn_asks: number;
  turn_iterations: number;
  recovery_attempts: number;
  stop_requested: number;
  message_count: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  created_at: number;
  updated_at: number;
}

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

const SESSION_COLUMNS = [
  "id",
  "v",
  "platform",
  "workspace",
  "channel",
  "thread",
  "owner_id",
  "status",
  "last_outcome",
  "last_error",
  "turn_count",
  "turn_asks",
  "turn_iterations",
  "recovery_attempts",
  "stop_requested",
  "message_count",
  "input_tokens",
  "output_tokens",
  "cache_read_tokens",
  "cache_write_tokens",
  "created_at",
  "updated_at",
] as const;

interface ToolCallRow {
  session_id: string;
  tool_use_id: string;
  v: number;
  name: string;
  arguments_hash: string;
  status: ToolCallRecord["status"];
  result: string | null;
  started_at: number;
  finished_at: number | null;
}

interface AskRow {
  id: string;
  v: number;
  session_id: string;
  tool_use_id: string;
  spec: string;
  status: Ask["status"];
  sibling_results: string;
  card_ref: string | null;
  deadline: number;
  answer: string | null;
  answered_by: string | null;
  created_at: number;
  ended_at: number | null;
}

/** The SessionStore on one SQLite file. Statements are prepared once; every method is one transaction. */
export class SqliteSessionStore implements Storage {
  readonly db: Database.Database;
  private readonly statements;
  private readonly admin: SqliteAdminQueries;
  private readonly api: SqliteApiStore;
  private readonly checkpointer: WalCheckpointer | undefined;

  /** `checkpoints: "on-commit"` leaves checkpoints to SQLite (each commit past 1,000 WAL pages), for comparison. */
  constructor(pathOrDatabase: string | Database.Database, options: { busyTimeoutMs?: number; checkpoints?: "worker" | "on-commit" } = {}) {
    this.db = typeof pathOrDatabase === "string" ? openDatabase(pathOrDatabase, options) : pathOrDatabase;
    const db = this.db;
    if (typeof pathOrDatabase === "string" && pathOrDatabase !== ":memory:" && options.checkpoints !== "on-commit")
      this.checkpointer = new WalCheckpointer(db, pathOrDatabase);
    this.admin = new SqliteAdminQueries(db);
    this.api = new SqliteApiStore(db, toAsk);
    this.statements = {
      claimEvent: db.prepare("INSERT OR IGNORE INTO processed_events (event_id, at) VALUES (?, ?)"),
      hasEvent: db.prepare<[string], { found: number }>("SELECT 1 AS found FROM processed_events WHERE event_id = ?"),
      pruneEvents: db.prepare("DELETE FROM processed_events WHERE at < ?"),
      insertSession: db.prepare(
        `INSERT OR IGNORE INTO sessions (id, v, conversation_key, platform, workspace, channel, thread, owner_id, status, created_at, updated_at)
         VALUES (@id, ${RECORD_VERSION}, @key, @platform, @workspace, @channel, @thread, @owner, 'idle', @now, @now)`,
      ),
      sessionById: db.prepare<[string], SessionRow>("SELECT * FROM sessions WHERE id = ?"),
      sessionByKey: db.prepare<[string], SessionRow>("SELECT * FROM sessions WHERE conversation_key = ?"),
      ping: db.prepare<[], { one: number }>("SELECT 1 AS one FROM sessions LIMIT 1"),
      // Start-up only: a scan of sessions, once.
      recentSessions: db.prepare<[string, number, number], SessionRow>(
        "SELECT * FROM sessions WHERE platform = ? AND updated_at >= ? ORDER BY updated_at DESC, id LIMIT ?",
      ),
      // Only for top-level DM messages; no index: a scan of sessions is well under a millisecond per thousand rows.
      waitingSessionIn: db.prepare<[string, string, string], SessionRow>(
        `SELECT * FROM sessions WHERE status = 'waiting' AND platform = ? AND workspace = ? AND channel = ?
         ORDER BY updated_at DESC, id LIMIT 1`,
      ),
      sessionsByStatus: db.prepare<[string], SessionRow>("SELECT * FROM sessions WHERE status = ? ORDER BY updated_at"),
      // The sweeper reads this every few seconds: the status is written out so the partial index applies.
      runningSessions: db.prepare<[], SessionRow>("SELECT * FROM sessions WHERE status = 'running' ORDER BY updated_at"),
      messages: db.prepare<[string], { v: number; role: ChatMessage["role"]; content: string }>(
        "SELECT v, role, content FROM messages WHERE session_id = ? ORDER BY seq",
      ),
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
           updated_at = @now, status = 'waiting', turn_asks = turn_asks + 1, last_outcome = 'suspended', recovery_attempts = 0
         WHERE id = @id RETURNING message_count`,
      ),
      endTurn: db.prepare(
        "UPDATE sessions SET status = @status, last_outcome = @outcome, last_error = @error, recovery_attempts = 0 WHERE id = @id",
      ),
      insertReply: db.prepare<[string, string, string, number]>(
        "INSERT OR IGNORE INTO pending_replies (key, session_id, text, created_at) VALUES (?, ?, ?, ?)",
      ),
      deleteReply: db.prepare<[string]>("DELETE FROM pending_replies WHERE key = ?"),
      takeTurn: db.prepare<{ id: string; owner: string; until: number; now: number; displace: string | null }>(
        `UPDATE sessions SET lease_owner = @owner, lease_until = @until
         WHERE id = @id AND status = 'running'
           AND (lease_owner IS NULL OR lease_owner = @owner OR lease_until <= @now OR lease_owner = @displace)`,
      ),
      leaseHolder: db.prepare<[string], { lease_owner: string | null; status: string }>(
        "SELECT lease_owner, status FROM sessions WHERE id = ?",
      ),
      releaseTurn: db.prepare<[string, string]>(
        "UPDATE sessions SET lease_owner = NULL, lease_until = NULL WHERE id = ? AND lease_owner = ?",
      ),
      pendingReplies: db.prepare<[number, number], { key: string; session_id: string; text: string }>(
        "SELECT key, session_id, text FROM pending_replies WHERE created_at < ? ORDER BY created_at, key LIMIT ?",
      ),
      insertAsk: db.prepare(
        `INSERT INTO asks (id, v, session_id, tool_use_id, spec, status, sibling_results, deadline, created_at)
         VALUES (@id, ${RECORD_VERSION}, @sessionId, @toolUseId, @spec, 'pending', @siblings, @deadline, @now)`,
      ),
      askById: db.prepare<[string], AskRow>("SELECT * FROM asks WHERE id = ?"),
      pendingAsk: db.prepare<[string], AskRow>("SELECT * FROM asks WHERE session_id = ? AND status = 'pending' LIMIT 1"),
      claimAsk: db.prepare<{ id: string; status: string; answer: string | null; by: string | null; now: number }, AskRow>(
        `UPDATE asks SET status = @status, answer = @answer, answered_by = @by, ended_at = @now
         WHERE id = @id AND status = 'pending' RETURNING *`,
      ),
      resumeSession: db.prepare<
        { id: string; status: string | null; added: number; outcome: string | null; now: number },
        { message_count: number }
      >(
        `UPDATE sessions SET status = COALESCE(@status, status), message_count = message_count + @added, last_outcome = COALESCE(@outcome, last_outcome),
           recovery_attempts = 0, updated_at = @now WHERE id = @id RETURNING message_count`,
      ),
      askWithSession: db.prepare<[string], AskRow & { [column: `s_${string}`]: unknown }>(
        `SELECT asks.*, ${SESSION_COLUMNS.map((column) => `sessions.${column} AS s_${column}`).join(", ")}
         FROM asks JOIN sessions ON sessions.id = asks.session_id WHERE asks.id = ?`,
      ),
      stopRequested: db.prepare<[string], { stop_requested: number }>("SELECT stop_requested FROM sessions WHERE id = ?"),
      setCardRef: db.prepare<[string, number, string], { status: Ask["status"] }>(
        "UPDATE asks SET card_ref = ?, deadline = ? WHERE id = ? RETURNING status",
      ),
      recordCardSettled: db.prepare<[number, string]>("UPDATE asks SET settled_at = ? WHERE id = ? AND status != 'pending'"),
      unsettled: db.prepare<[number, number], AskRow>(
        `SELECT * FROM asks WHERE status != 'pending' AND card_ref IS NOT NULL AND settled_at IS NULL AND ended_at >= ?
         ORDER BY ended_at LIMIT ?`,
      ),
      unposted: db.prepare<[], AskRow>("SELECT * FROM asks WHERE status = 'pending' AND card_ref IS NULL ORDER BY deadline"),
      expired: db.prepare<[number, number], AskRow>(
        "SELECT * FROM asks WHERE status = 'pending' AND deadline <= ? AND card_ref IS NOT NULL ORDER BY deadline LIMIT ?",
      ),
      requestStop: db.prepare("UPDATE sessions SET stop_requested = 1 WHERE id = ?"),
      waitOnExternal: db.prepare<[number, string]>("UPDATE sessions SET status = 'waiting', updated_at = ? WHERE id = ?"),
      countRecovery: db.prepare<[string], { recovery_attempts: number }>(
        "UPDATE sessions SET recovery_attempts = recovery_attempts + 1 WHERE id = ? RETURNING recovery_attempts",
      ),
      asksOfSession: db.prepare<[string], AskRow>("SELECT * FROM asks WHERE session_id = ? ORDER BY created_at, id"),
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

  async claimEvent(eventId: string, now: number): Promise<boolean> {
    return this.statements.claimEvent.run(eventId, now).changes === 1;
  }

  async pruneEvents(before: number): Promise<number> {
    return this.statements.pruneEvents.run(before).changes;
  }

  async createSession(input: NewSession): Promise<Session> {
    const { conversation } = input;
    const key = conversationKey(conversation);
    this.statements.insertSession.run({ id: input.id, key, ...conversation, owner: input.ownerId, now: input.now });
    // INSERT OR IGNORE: a concurrent creator for the same thread wins, and both read the one row.
    return toSession(this.statements.sessionByKey.get(key)!);
  }

  async getSession(id: string): Promise<Session | undefined> {
    const row = this.statements.sessionById.get(id);
    return row ? toSession(row) : undefined;
  }

  async takeTurn(sessionId: string, lease: TurnLease): Promise<{ taken: true } | { taken: false; holder: string | null }> {
    const until = lease.now + lease.ttlMs;
    const parameters = { id: sessionId, owner: lease.owner, until, now: lease.now, displace: lease.displace ?? null };
    if (this.statements.takeTurn.run(parameters).changes > 0) return { taken: true };
    const row = this.statements.leaseHolder.get(sessionId);
    return { taken: false, holder: row?.status === "running" ? row.lease_owner : null };
  }

  async releaseTurn(sessionId: string, owner: string): Promise<void> {
    this.statements.releaseTurn.run(sessionId, owner);
  }

  async replyPosted(key: string): Promise<void> {
    this.statements.deleteReply.run(key);
  }

  async listPendingReplies(before: number, limit: number): Promise<PendingReply[]> {
    return this.statements.pendingReplies.all(before, limit).map((row) => ({ key: row.key, sessionId: row.session_id, text: row.text }));
  }

  async waitingSessionIn(place: Omit<ConversationRef, "thread">): Promise<Session | undefined> {
    const row = this.statements.waitingSessionIn.get(place.platform, place.workspace, place.channel);
    return row ? toSession(row) : undefined;
  }

  async findSession(conversation: ConversationRef): Promise<Session | undefined> {
    const row = this.statements.sessionByKey.get(conversationKey(conversation));
    return row ? toSession(row) : undefined;
  }

  async loadMessages(sessionId: string): Promise<ChatMessage[]> {
    return this.statements.messages.all(sessionId).map((row) => {
      checkVersion("message", row.v);
      return { role: row.role, content: readContent(row.content) };
    });
  }

  async startTurnOrQueue(sessionId: string, message: ChatMessage | null, now: number, eventId?: string): Promise<StartOrQueue> {
    return this.db
      .transaction((): StartOrQueue => {
        const row = this.statements.sessionById.get(sessionId);
        if (!row) throw new Error(`no session ${sessionId}`);
        if (row.status === "waiting") return "waiting";
        if (eventId !== undefined && this.statements.claimEvent.run(eventId, now).changes === 0) return "duplicate";
        if (row.status === "running") {
          if (message) this.statements.queue.run(sessionId, writeContent(message.content));
          return "queued";
        }
        if (message) this.statements.insertMessage.run(sessionId, row.message_count, message.role, writeContent(message.content));
        this.statements.beginTurn.run(message ? 1 : 0, now, sessionId);
        return "started";
      })
      .immediate();
  }

  async commitStep(sessionId: string, step: Step): Promise<StepResult> {
    return this.db
      .transaction((): StepResult => {
        const parameters = {
          id: sessionId,
          added: step.messages.length,
          iteration: step.messages.some((message) => message.role === "assistant") ? 1 : 0,
          input: step.usage.inputTokens,
          output: step.usage.outputTokens,
          cacheRead: step.usage.cacheReadTokens,
          cacheWrite: step.usage.cacheWriteTokens,
          now: step.now,
        };
        const updated = (step.ask ? this.statements.stepSuspend : this.statements.step).get(parameters);
        if (!updated) throw new Error(`no session ${sessionId}`);
        let seq = updated.message_count - step.messages.length;
        for (const message of step.messages)
          this.statements.insertMessage.run(sessionId, seq++, message.role, writeContent(message.content));
        if (step.ask) {
          this.statements.insertAsk.run({
            id: step.ask.id,
            sessionId,
            toolUseId: step.ask.toolUseId,
            spec: writeSpec(step.ask.spec),
            siblings: JSON.stringify(step.ask.siblingResults),
            deadline: step.ask.deadline,
            now: step.now,
          });
          return { nextTurn: false };
        }
        if (!step.end) return { nextTurn: false };
        const queued = this.statements.queued.all(sessionId);
        const status = step.end.outcome === "failed" ? "failed" : "idle";
        this.statements.endTurn.run({ id: sessionId, status, outcome: step.end.outcome, error: step.end.error ?? null });
        if (step.end.reply) this.statements.insertReply.run(step.end.reply.key, sessionId, step.end.reply.text, step.now);
        if (queued.length === 0) return { nextTurn: false };
        // Messages queued during the turn start the next one in this same transaction: none is dropped.
        for (const item of queued) {
          checkVersion("queued message", item.v);
          this.statements.insertMessage.run(sessionId, seq++, "user", item.content);
        }
        this.statements.dequeue.run(sessionId);
        this.statements.beginTurn.run(queued.length, step.now, sessionId);
        return { nextTurn: true };
      })
      .immediate();
  }

  async getAsk(askId: string): Promise<Ask | undefined> {
    const row = this.statements.askById.get(askId);
    return row ? toAsk(row) : undefined;
  }

  async pendingAsk(sessionId: string): Promise<Ask | undefined> {
    const row = this.statements.pendingAsk.get(sessionId);
    return row ? toAsk(row) : undefined;
  }

  async getAskWithSession(askId: string): Promise<{ ask: Ask; session: Session } | undefined> {
    const row = this.statements.askWithSession.get(askId);
    if (!row) return undefined;
    const sessionRow = Object.fromEntries(SESSION_COLUMNS.map((column) => [column, row[`s_${column}`]])) as unknown as SessionRow;
    return { ask: toAsk(row), session: toSession(sessionRow) };
  }

  async isStopRequested(sessionId: string): Promise<boolean> {
    return this.statements.stopRequested.get(sessionId)?.stop_requested === 1;
  }

  async resolveAsk(askId: string, resolution: AskResolution): Promise<Ask | undefined> {
    return this.db
      .transaction((): Ask | undefined => {
        const claimed = this.statements.claimAsk.get({
          id: askId,
          status: resolution.status,
          answer: resolution.answer ? JSON.stringify(resolution.answer) : null,
          by: resolution.answeredBy,
          now: resolution.now,
        });
        if (!claimed) return undefined;
        const { resultMessage } = resolution;
        const updated = this.statements.resumeSession.get({
          id: claimed.session_id,
          status: resolution.sessionStatus,
          added: resultMessage ? 1 : 0,
          outcome: resolution.outcome ?? null,
          now: resolution.now,
        })!;
        if (resultMessage)
          this.statements.insertMessage.run(claimed.session_id, updated.message_count - 1, "user", writeContent(resultMessage.content));
        this.statements.audit.run(resolution.audit);
        return toAsk(claimed);
      })
      .immediate();
  }

  async setCardRef(askId: string, cardRef: string, deadline: number): Promise<Ask["status"] | undefined> {
    return this.statements.setCardRef.get(cardRef, deadline, askId)?.status;
  }

  async recordCardSettled(askId: string, now: number): Promise<void> {
    this.statements.recordCardSettled.run(now, askId);
  }

  async listUnsettledAsks(since: number, limit: number): Promise<Ask[]> {
    return this.statements.unsettled.all(since, limit).map(toAsk);
  }

  async hasEvent(eventId: string): Promise<boolean> {
    return this.statements.hasEvent.get(eventId) !== undefined;
  }

  async listUnpostedAsks(): Promise<Ask[]> {
    return this.statements.unposted.all().map(toAsk);
  }

  async listExpiredAsks(now: number, limit: number): Promise<Ask[]> {
    return this.statements.expired.all(now, limit).map(toAsk);
  }

  async listRecentConversations(platform: string, since: number, limit: number): Promise<ConversationRef[]> {
    return this.statements.recentSessions.all(platform, since, limit).map((row) => toSession(row).conversation);
  }

  async listSessionsByStatus(status: SessionStatus): Promise<Session[]> {
    const rows = status === "running" ? this.statements.runningSessions.all() : this.statements.sessionsByStatus.all(status);
    return rows.map(toSession);
  }

  async openAsk(sessionId: string, ask: NewAsk, now: number): Promise<void> {
    this.statements.insertAsk.run({
      id: ask.id,
      sessionId,
      toolUseId: ask.toolUseId,
      spec: writeSpec(ask.spec),
      siblings: JSON.stringify(ask.siblingResults),
      deadline: ask.deadline,
      now,
    });
  }

  async createExternalAsk(input: NewExternalAsk): Promise<ExternalCreate> {
    return this.db
      .transaction((): ExternalCreate => {
        const earlier = input.idempotencyKey === null ? undefined : this.api.byIdempotencyKey(input.token, input.idempotencyKey);
        if (earlier) return { kind: "replayed", external: earlier };
        const { conversation, id, ownerId } = input.session;
        const key = conversationKey(conversation);
        // A thread with a session keeps it (the insert is ignored); only an idle or failed one may wait on this ask.
        this.statements.insertSession.run({ id, key, ...conversation, owner: ownerId, now: input.now });
        const session = this.statements.sessionByKey.get(key)!;
        if (session.status !== "idle" && session.status !== "failed") return { kind: "busy" };
        const { ask } = input;
        this.statements.insertAsk.run({
          id: ask.id,
          sessionId: session.id,
          toolUseId: ask.toolUseId,
          spec: writeSpec(ask.spec),
          siblings: JSON.stringify(ask.siblingResults),
          deadline: ask.deadline,
          now: input.now,
        });
        this.statements.waitOnExternal.run(input.now, session.id);
        this.api.insert({ ...input, askId: ask.id });
        return { kind: "created", askId: ask.id, sessionId: session.id };
      })
      .immediate();
  }

  async getExternalAsk(askId: string): Promise<ExternalAsk | undefined> {
    return this.api.get(askId);
  }

  async findByIdempotencyKey(token: string, key: string): Promise<ExternalAsk | undefined> {
    return this.api.byIdempotencyKey(token, key);
  }

  async listDueCallbacks(now: number, limit: number): Promise<Array<{ external: ExternalAsk; ask: Ask }>> {
    return this.api.due(now, limit);
  }

  async takeCallback(askId: string, now: number, retryAt: number): Promise<number | undefined> {
    return this.api.take(askId, now, retryAt);
  }

  async finishCallback(askId: string, outcome: string, now: number): Promise<void> {
    this.api.finish(askId, outcome, now);
  }

  async saveToken(token: StoredToken): Promise<boolean> {
    return this.api.saveToken(token);
  }

  async revokeToken(name: string, now: number): Promise<boolean> {
    return this.api.revokeToken(name, now);
  }

  async listTokens(): Promise<StoredToken[]> {
    return this.api.listTokens();
  }

  async askForToolUse(sessionId: string, toolUseId: string): Promise<Ask | undefined> {
    const row = this.statements.askForToolUse.get(sessionId, toolUseId);
    return row ? toAsk(row) : undefined;
  }

  async getToolCall(sessionId: string, toolUseId: string): Promise<ToolCallRecord | undefined> {
    const row = this.statements.toolCall.get(sessionId, toolUseId);
    return row ? toToolCall(row) : undefined;
  }

  async startToolCall(call: NewToolCall): Promise<boolean> {
    return this.statements.startToolCall.run(call).changes === 1;
  }

  async finishToolCall(sessionId: string, toolUseId: string, result: ToolResultBlock, now: number): Promise<void> {
    this.statements.finishToolCall.run(writeToolResult(result), now, sessionId, toolUseId);
  }

  async requestStop(sessionId: string): Promise<void> {
    this.statements.requestStop.run(sessionId);
  }

  async countRecovery(sessionId: string): Promise<number> {
    return this.statements.countRecovery.get(sessionId)?.recovery_attempts ?? 0;
  }

  async audit(entry: AuditEntry): Promise<void> {
    this.statements.audit.run(entry);
  }

  async listSessions(filter: SessionFilter): Promise<Session[]> {
    return this.admin.listSessionRows<SessionRow>(filter).map(toSession);
  }

  async listAsks(sessionId: string): Promise<Ask[]> {
    return this.statements.asksOfSession.all(sessionId).map(toAsk);
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
    this.admin.saveSetting(key, value);
  }

  async ping(): Promise<void> {
    this.statements.ping.get();
  }

  async close(): Promise<void> {
    await this.checkpointer?.stop();
    if (this.db.open) this.db.close();
  }
}

function toSession(row: SessionRow): Session {
  checkVersion("session", row.v);
  return {
    id: row.id,
    conversation: { platform: row.platform, workspace: row.workspace, channel: row.channel, thread: row.thread },
    ownerId: row.owner_id,
    status: row.status,
    lastOutcome: row.last_outcome,
    lastError: row.last_error,
    turnCount: row.turn_count,
    turnAsks: row.turn_asks,
    turnIterations: row.turn_iterations,
    recoveryAttempts: row.recovery_attempts,
    stopRequested: row.stop_requested === 1,
    usage: {
      inputTokens: row.input_tokens,
      outputTokens: row.output_tokens,
      cacheReadTokens: row.cache_read_tokens,
      cacheWriteTokens: row.cache_write_tokens,
    },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toToolCall(row: ToolCallRow): ToolCallRecord {
  checkVersion("tool call", row.v);
  return {
    sessionId: row.session_id,
    toolUseId: row.tool_use_id,
    name: row.name,
    argumentsHash: row.arguments_hash,
    status: row.status,
    result: row.result === null ? null : readToolResult(row.result),
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}

function toAsk(row: AskRow): Ask {
  checkVersion("ask", row.v);
  return {
    id: row.id,
    sessionId: row.session_id,
    toolUseId: row.tool_use_id,
    spec: readSpec(row.spec),
    status: row.status,
    siblingResults: readSiblingResults(row.sibling_results),
    cardRef: row.card_ref,
    deadline: row.deadline,
    answer: readAnswer(row.answer),
    answeredBy: row.answered_by,
    createdAt: row.created_at,
    endedAt: row.ended_at,
  };
}

translateStoreErrors(SqliteSessionStore.prototype);
