import type pg from "pg";
import type { ChatMessage, ToolResultBlock } from "../../src/ports/model-client.js";
import {
  type Ask,
  type AskResolution,
  type AuditEntry,
  type ConversationRef,
  conversationKey,
  type LeaseAnswer,
  type NewAsk,
  type NewSession,
  type NewToolCall,
  resumedLease,
  type Session,
  type SessionStatus,
  type SessionStore,
  type StartOrQueue,
  type Step,
  type StepResult,
  type ToolCallRecord,
  type TurnLease,
  type TurnLeaseAnswer,
} from "../../src/ports/session-store.js";
import { translated } from "./postgres-errors.js";
import { run, type Statement, transaction } from "./postgres-pool.js";
import {
  type AskRow,
  checkVersion,
  readContent,
  replyRow,
  type SessionRow,
  type ToolCallRow,
  toAsk,
  toSession,
  toToolCall,
  writeContent,
  writeToolResult,
} from "./postgres-rows.js";
import { claimValues, newAskValues, SQL } from "./postgres-statements.js";

/**
 * The hot path (SessionStore) on PostgreSQL. Every method is one statement or one transaction on a pooled
 * connection; the claims (event ids, turn starts, ask answers) are row locks and compare-and-sets in the database.
 */
export class PostgresHotPath implements SessionStore {
  constructor(readonly pool: pg.Pool) {}

  async claimEvent(eventId: string, now: number): Promise<boolean> {
    return (await this.query(SQL.claimEvent, [eventId, now])).rowCount === 1;
  }

  async hasEvent(eventId: string): Promise<boolean> {
    return (await this.query(SQL.hasEvent, [eventId])).rowCount === 1;
  }

  async createSession(input: NewSession): Promise<Session> {
    const { conversation } = input;
    const key = conversationKey(conversation);
    const values = [input.id, key, conversation.platform, conversation.workspace, conversation.channel, conversation.thread];
    const inserted = await this.query<SessionRow>(SQL.insertSession, [...values, input.ownerId, input.now]);
    // A concurrent creator for the same thread won: its INSERT committed before ours gave up, so this read sees it.
    const row = inserted.rows[0] ?? (await this.query<SessionRow>(SQL.sessionByKey, [key])).rows[0];
    if (!row) throw new Error(`session id ${input.id} is already bound to another conversation`);
    return toSession(row);
  }

  async getSession(id: string): Promise<Session | undefined> {
    const row = (await this.query<SessionRow>(SQL.sessionById, [id])).rows[0];
    return row ? toSession(row) : undefined;
  }

  async takeTurn(sessionId: string, lease: TurnLease): Promise<TurnLeaseAnswer> {
    const granted = (await this.query<SessionRow>(SQL.takeTurn, claimValues(sessionId, lease))).rows[0];
    if (granted) return { taken: true, session: toSession(granted) };
    const row = (await this.query<{ lease_owner: string | null; status: string }>(SQL.leaseHolder, [sessionId])).rows[0];
    return { taken: false, holder: row?.status === "running" ? row.lease_owner : null };
  }

  async claimCardPost(askId: string, lease: TurnLease): Promise<LeaseAnswer> {
    if (((await this.query(SQL.claimCardPost, claimValues(askId, lease))).rowCount ?? 0) > 0) return { taken: true };
    return {
      taken: false,
      holder: (await this.query<{ post_owner: string | null }>(SQL.cardPostHolder, [askId])).rows[0]?.post_owner ?? null,
    };
  }

  async claimReplyPost(key: string, lease: TurnLease): Promise<LeaseAnswer> {
    if (((await this.query(SQL.claimReplyPost, claimValues(key, lease))).rowCount ?? 0) > 0) return { taken: true };
    return {
      taken: false,
      holder: (await this.query<{ post_owner: string | null }>(SQL.replyPostHolder, [key])).rows[0]?.post_owner ?? null,
    };
  }

  async releaseTurn(sessionId: string, owner: string): Promise<void> {
    await this.query(SQL.releaseTurn, [sessionId, owner]);
  }

  async replyPosted(key: string): Promise<void> {
    await this.query(SQL.deleteReply, [key]);
  }

  async waitingSessionIn(place: Omit<ConversationRef, "thread">): Promise<Session | undefined> {
    const row = (await this.query<SessionRow>(SQL.waitingSessionIn, [place.platform, place.workspace, place.channel])).rows[0];
    return row ? toSession(row) : undefined;
  }

  async findSession(conversation: ConversationRef): Promise<Session | undefined> {
    const row = (await this.query<SessionRow>(SQL.sessionByKey, [conversationKey(conversation)])).rows[0];
    return row ? toSession(row) : undefined;
  }

  async loadMessages(sessionId: string): Promise<ChatMessage[]> {
    const { rows } = await this.query<{ v: number; role: ChatMessage["role"]; content: string }>(SQL.messages, [sessionId]);
    return rows.map((row) => {
      checkVersion("message", row.v);
      return { role: row.role, content: readContent(row.content) };
    });
  }

  async startTurnOrQueue(sessionId: string, message: ChatMessage | null, now: number, eventId?: string): Promise<StartOrQueue> {
    return this.transaction(async (client): Promise<StartOrQueue> => {
      const row = (await run<{ v: number; status: SessionStatus; message_count: number }>(client, SQL.lockSession, [sessionId])).rows[0];
      if (!row) throw new Error(`no session ${sessionId}`);
      checkVersion("session", row.v);
      if (row.status === "waiting") return "waiting";
      if (eventId !== undefined && (await run(client, SQL.claimEvent, [eventId, now])).rowCount === 0) return "duplicate";
      if (row.status === "running") {
        if (message) await run(client, SQL.queue, [sessionId, writeContent(message.content)]);
        return "queued";
      }
      if (message) await insertMessages(client, sessionId, row.message_count, [message.role], [writeContent(message.content)]);
      await run(client, SQL.beginTurn, [sessionId, message ? 1 : 0, now]);
      return "started";
    });
  }

  async commitStep(sessionId: string, step: Step): Promise<StepResult> {
    return this.transaction(async (client): Promise<StepResult> => {
      const { usage } = step;
      const counters = [step.messages.length, usage.inputTokens, usage.outputTokens, usage.cacheReadTokens, usage.cacheWriteTokens];
      // A step holding an assistant message is one model iteration; a step of tool results only is not.
      const iteration = step.messages.some((message) => message.role === "assistant") ? 1 : 0;
      const updated = await run<{ message_count: number }>(client, step.ask ? SQL.stepSuspend : SQL.step, [
        sessionId,
        ...counters,
        step.now,
        iteration,
      ]);
      const messageCount = updated.rows[0]?.message_count;
      if (messageCount === undefined) throw new Error(`no session ${sessionId}`);
      let seq = messageCount - step.messages.length;
      const roles = step.messages.map((message) => message.role);
      await insertMessages(
        client,
        sessionId,
        seq,
        roles,
        step.messages.map((message) => writeContent(message.content)),
      );
      seq += step.messages.length;
      if (step.ask) {
        await run(client, SQL.insertAsk, newAskValues(step.ask, sessionId, step.now));
        return { nextTurn: false };
      }
      if (!step.end) return { nextTurn: false };
      const status = step.end.outcome === "failed" ? "failed" : "idle";
      // The session row is locked, so no message can be queued between this read and the turn ending.
      const queued = (await run<{ id: number; v: number; content: string }>(client, SQL.dequeue, [sessionId])).rows;
      await run(client, SQL.endTurn, [sessionId, status, step.end.outcome, step.end.error ?? null, queued.length === 0]);
      if (step.end.reply) await run(client, SQL.insertReply, replyRow(step.end.reply, sessionId, step.now));
      if (queued.length === 0) return { nextTurn: false };
      // Messages queued during the turn start the next one in this same transaction: none is dropped.
      queued.sort((a, b) => a.id - b.id);
      for (const item of queued) checkVersion("queued message", item.v);
      const contents = queued.map((item) => item.content);
      await insertMessages(
        client,
        sessionId,
        seq,
        contents.map(() => "user"),
        contents,
      );
      await run(client, SQL.beginTurn, [sessionId, queued.length, step.now]);
      return { nextTurn: true };
    });
  }

  async getAsk(askId: string): Promise<Ask | undefined> {
    const row = (await this.query<AskRow>(SQL.askById, [askId])).rows[0];
    return row ? toAsk(row) : undefined;
  }

  async pendingAsk(sessionId: string): Promise<Ask | undefined> {
    const row = (await this.query<AskRow>(SQL.pendingAsk, [sessionId])).rows[0];
    return row ? toAsk(row) : undefined;
  }

  async getAskWithSession(askId: string): Promise<{ ask: Ask; session: Session } | undefined> {
    const row = (await this.query<AskRow & { session: SessionRow }>(SQL.askWithSession, [askId])).rows[0];
    return row ? { ask: toAsk(row), session: toSession(row.session) } : undefined;
  }

  async isStopRequested(sessionId: string): Promise<boolean> {
    return (await this.query<{ stop_requested: boolean }>(SQL.stopRequested, [sessionId])).rows[0]?.stop_requested === true;
  }

  async resolveAsk(askId: string, resolution: AskResolution): Promise<Ask | undefined> {
    const answer = resolution.answer ? JSON.stringify(resolution.answer) : null;
    const { audit } = resolution;
    const lease = resumedLease(resolution);
    const values = [
      askId,
      resolution.status,
      answer,
      resolution.answeredBy,
      resolution.now,
      resolution.sessionStatus,
      resolution.outcome ?? null,
      resolution.resultMessage ? writeContent(resolution.resultMessage.content) : null,
      audit.at,
      audit.actor,
      audit.action,
      audit.target,
      audit.outcome,
      lease?.owner ?? null,
      lease?.until ?? null,
    ];
    const claimed = (await this.query<AskRow & { resumed: number }>(SQL.resolveAsk, values)).rows[0];
    if (!claimed) return undefined;
    // Unreachable while asks are only created and purged with their session; reported, not silent (the claim stands).
    if (claimed.resumed !== 1) throw new Error(`ask ${askId} was claimed but belongs to no session`);
    return toAsk(claimed);
  }

  async setCardRef(askId: string, cardRef: string, deadline?: number): Promise<Ask["status"] | undefined> {
    // COALESCE: a card posted on time keeps the deadline its ask was written with.
    return (await this.query<{ status: Ask["status"] }>(SQL.setCardRef, [askId, cardRef, deadline ?? null])).rows[0]?.status;
  }

  async recordCardSettled(askId: string, now: number): Promise<void> {
    await this.query(SQL.recordCardSettled, [askId, now]);
  }

  async openAsk(sessionId: string, ask: NewAsk, now: number): Promise<void> {
    await this.query(SQL.insertAsk, newAskValues(ask, sessionId, now));
  }

  async askForToolUse(sessionId: string, toolUseId: string): Promise<Ask | undefined> {
    const row = (await this.query<AskRow>(SQL.askForToolUse, [sessionId, toolUseId])).rows[0];
    return row ? toAsk(row) : undefined;
  }

  async getToolCall(sessionId: string, toolUseId: string): Promise<ToolCallRecord | undefined> {
    const row = (await this.query<ToolCallRow>(SQL.toolCall, [sessionId, toolUseId])).rows[0];
    return row ? toToolCall(row) : undefined;
  }

  async startToolCall(call: NewToolCall): Promise<boolean> {
    const values = [call.sessionId, call.toolUseId, call.name, call.argumentsHash, call.now];
    return (await this.query(SQL.startToolCall, values)).rowCount === 1;
  }

  async finishToolCall(sessionId: string, toolUseId: string, result: ToolResultBlock, now: number): Promise<void> {
    await this.query(SQL.finishToolCall, [sessionId, toolUseId, writeToolResult(result), now]);
  }

  async requestStop(sessionId: string): Promise<void> {
    await this.query(SQL.requestStop, [sessionId]);
  }

  async audit(entry: AuditEntry): Promise<void> {
    await this.query(SQL.audit, [entry.at, entry.actor, entry.action, entry.target, entry.outcome]);
  }

  protected async query<Row extends pg.QueryResultRow>(statement: Statement, values: unknown[]): Promise<pg.QueryResult<Row>> {
    return translated(() => run<Row>(this.pool, statement, values));
  }

  protected async transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return translated(() => transaction(this.pool, work));
  }
}

/** Appends messages numbered from `firstSeq`, in one statement; nothing when there are none. */
async function insertMessages(client: pg.PoolClient, sessionId: string, firstSeq: number, roles: string[], contents: string[]) {
  if (contents.length === 0) return;
  await run(client, SQL.insertMessages, [sessionId, firstSeq, roles, contents]);
}
