import type Database from "better-sqlite3";
import type { ChatMessage, ToolResultBlock } from "../src/ports/model-client.js";
import {
  type Ask,
  type AskResolution,
  type AuditEntry,
  type ConversationRef,
  conversationKey,
  heldUntil,
  type LeaseAnswer,
  type NewAsk,
  type NewSession,
  type NewToolCall,
  resumedLease,
  type Session,
  type SessionStore,
  type StartOrQueue,
  type Step,
  type StepResult,
  type ToolCallRecord,
  type TurnLease,
  type TurnLeaseAnswer,
} from "../src/ports/session-store.js";
import { checkVersion, readContent, replyRow, writeContent, writeToolResult } from "./records.js";
import { translateStoreErrors } from "./sqlite-errors.js";
import { ASK_COLUMNS, askRowOf, sessionRowOf, toAsk, toSession, toToolCall } from "./sqlite-rows.js";
import { type ClaimParameters, newAskParameters, prepareStatements, type Statements } from "./sqlite-statements.js";

/** How long a settled mark waits for a write transaction to go with before it is written alone. */
export const SETTLED_MARK_DELAY_MS = 1000;

/** The hot path (SessionStore) on one SQLite file. Statements are prepared once; every method is one transaction. */
export class SqliteHotPath implements SessionStore {
  protected readonly statements: Statements;
  /** Settled marks not written yet (see recordCardSettled): ask id → when its card was settled. */
  private readonly settledMarks = new Map<string, number>();
  private settledTimer: NodeJS.Timeout | undefined;
  /**
   * Every write transaction's wrapper, built once: `db.transaction()` builds five functions per call, a twentieth of
   * a resume when called per write. It writes the settled marks it is given, then runs the body.
   */
  private readonly write: Database.Transaction<(marks: Array<[string, number]> | undefined, body: () => unknown) => unknown>;

  constructor(readonly db: Database.Database) {
    this.statements = prepareStatements(db);
    this.write = db.transaction((marks, body) => {
      if (marks) for (const [askId, at] of marks) this.statements.recordCardSettled.run(at, askId);
      return body();
    });
  }

  async claimEvent(eventId: string, now: number): Promise<boolean> {
    return this.statements.claimEvent.run(eventId, now).changes === 1;
  }

  async createSession(input: NewSession): Promise<Session> {
    const { conversation } = input;
    const key = conversationKey(conversation);
    this.statements.insertSession.run({ id: input.id, key, ...conversation, owner: input.ownerId, now: input.now });
    // INSERT OR IGNORE: a concurrent creator for the same thread wins, and both read the one row.
    return toSession(sessionRowOf(this.statements.sessionByKey.get(key)!));
  }

  async getSession(id: string): Promise<Session | undefined> {
    const values = this.statements.sessionById.get(id);
    return values ? toSession(sessionRowOf(values)) : undefined;
  }

  async takeTurn(sessionId: string, lease: TurnLease): Promise<TurnLeaseAnswer> {
    const granted = this.statements.takeTurn.get(claimParameters(sessionId, lease));
    if (granted) return { taken: true, session: toSession(sessionRowOf(granted)) };
    const row = this.statements.leaseHolder.get(sessionId);
    return { taken: false, holder: row?.status === "running" ? row.lease_owner : null };
  }

  async claimCardPost(askId: string, lease: TurnLease): Promise<LeaseAnswer> {
    if (this.statements.claimCardPost.run(claimParameters(askId, lease)).changes > 0) return { taken: true };
    return { taken: false, holder: this.statements.cardPostHolder.get(askId)?.post_owner ?? null };
  }

  async claimReplyPost(key: string, lease: TurnLease): Promise<LeaseAnswer> {
    if (this.statements.claimReplyPost.run(claimParameters(key, lease)).changes > 0) return { taken: true };
    return { taken: false, holder: this.statements.replyPostHolder.get(key)?.post_owner ?? null };
  }

  async releaseTurn(sessionId: string, owner: string): Promise<void> {
    this.statements.releaseTurn.run(sessionId, owner);
  }

  async replyPosted(key: string): Promise<void> {
    this.statements.deleteReply.run(key);
  }

  async waitingSessionIn(place: Omit<ConversationRef, "thread">): Promise<Session | undefined> {
    const row = this.statements.waitingSessionIn.get(place.platform, place.workspace, place.channel);
    return row ? toSession(row) : undefined;
  }

  async findSession(conversation: ConversationRef): Promise<Session | undefined> {
    const values = this.statements.sessionByKey.get(conversationKey(conversation));
    return values ? toSession(sessionRowOf(values)) : undefined;
  }

  async loadMessages(sessionId: string): Promise<ChatMessage[]> {
    return this.statements.messages.all(sessionId).map(([version, role, content]) => {
      checkVersion("message", version);
      return { role, content: readContent(content) };
    });
  }

  async startTurnOrQueue(sessionId: string, message: ChatMessage | null, now: number, eventId?: string): Promise<StartOrQueue> {
    return this.immediate((): StartOrQueue => {
      const values = this.statements.sessionById.get(sessionId);
      if (!values) throw new Error(`no session ${sessionId}`);
      const row = sessionRowOf(values);
      if (row.status === "waiting") return "waiting";
      if (eventId !== undefined && this.statements.claimEvent.run(eventId, now).changes === 0) return "duplicate";
      if (row.status === "running") {
        if (message) this.statements.queue.run(sessionId, writeContent(message.content));
        return "queued";
      }
      if (message) this.statements.insertMessage.run(sessionId, row.message_count, message.role, writeContent(message.content));
      this.statements.beginTurn.run(message ? 1 : 0, now, sessionId);
      return "started";
    });
  }

  async commitStep(sessionId: string, step: Step): Promise<StepResult> {
    return this.immediate((): StepResult => {
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
      for (const message of step.messages) this.statements.insertMessage.run(sessionId, seq++, message.role, writeContent(message.content));
      if (step.ask) {
        this.statements.insertAsk.run(newAskParameters(step.ask, sessionId, step.now));
        return { nextTurn: false };
      }
      if (!step.end) return { nextTurn: false };
      const queued = this.statements.queued.all(sessionId);
      const status = step.end.outcome === "failed" ? "failed" : "idle";
      const release = queued.length === 0 ? 1 : 0;
      this.statements.endTurn.run({ id: sessionId, status, outcome: step.end.outcome, error: step.end.error ?? null, release });
      if (step.end.reply) this.statements.insertReply.run(...replyRow(step.end.reply, sessionId, step.now));
      if (queued.length === 0) return { nextTurn: false };
      // Messages queued during the turn start the next one in this same transaction: none is dropped.
      for (const item of queued) {
        checkVersion("queued message", item.v);
        this.statements.insertMessage.run(sessionId, seq++, "user", item.content);
      }
      this.statements.dequeue.run(sessionId);
      this.statements.beginTurn.run(queued.length, step.now, sessionId);
      return { nextTurn: true };
    });
  }

  async getAsk(askId: string): Promise<Ask | undefined> {
    const values = this.statements.askById.get(askId);
    return values ? toAsk(askRowOf(values)) : undefined;
  }

  async pendingAsk(sessionId: string): Promise<Ask | undefined> {
    const values = this.statements.pendingAsk.get(sessionId);
    return values ? toAsk(askRowOf(values)) : undefined;
  }

  async getAskWithSession(askId: string): Promise<{ ask: Ask; session: Session } | undefined> {
    const values = this.statements.askWithSession.get(askId);
    if (!values) return undefined;
    return { ask: toAsk(askRowOf(values)), session: toSession(sessionRowOf(values, ASK_COLUMNS.length)) };
  }

  async isStopRequested(sessionId: string): Promise<boolean> {
    return this.statements.stopRequested.get(sessionId)?.stop_requested === 1;
  }

  async resolveAsk(askId: string, resolution: AskResolution): Promise<Ask | undefined> {
    return this.immediate((): Ask | undefined => {
      const claimedValues = this.statements.claimAsk.get({
        id: askId,
        status: resolution.status,
        answer: resolution.answer ? JSON.stringify(resolution.answer) : null,
        by: resolution.answeredBy,
        now: resolution.now,
      });
      if (!claimedValues) return undefined;
      const claimed = askRowOf(claimedValues);
      const { resultMessage } = resolution;
      const updated = this.statements.resumeSession.get({
        id: claimed.session_id,
        status: resolution.sessionStatus,
        added: resultMessage ? 1 : 0,
        outcome: resolution.outcome ?? null,
        now: resolution.now,
        ...leaseColumns(resolution),
      })!;
      if (resultMessage)
        this.statements.insertMessage.run(claimed.session_id, updated.message_count - 1, "user", writeContent(resultMessage.content));
      this.statements.audit.run(resolution.audit);
      return toAsk(claimed);
    });
  }

  async setCardRef(askId: string, cardRef: string, deadline?: number): Promise<Ask["status"] | undefined> {
    // Naming the deadline in SET moves its index entry even when the value is the same: a page more per card.
    if (deadline === undefined) return this.statements.setCardRef.get(cardRef, askId)?.status;
    return this.statements.setCardRefAndDeadline.get(cardRef, deadline, askId)?.status;
  }

  async recordCardSettled(askId: string, now: number): Promise<void> {
    // A commit of its own per settle was a fifth of a resume's writes: it goes with the next write transaction (the
    // resumed turn's step, as a rule), or alone after a second of none. Lost in a crash, it costs one idempotent edit.
    this.settledMarks.set(askId, now);
    this.settledTimer ??= setTimeout(() => {
      this.settledTimer = undefined;
      try {
        this.writeSettledMarks();
      } catch {
        // Kept: the next write transaction carries them.
      }
    }, SETTLED_MARK_DELAY_MS).unref();
  }

  /** Writes the settled marks still held, in a transaction of their own (a list of unsettled asks reads them). */
  protected writeSettledMarks(): void {
    if (this.settledMarks.size > 0 && this.db.open) this.immediate(() => undefined);
  }

  /**
   * A write transaction that takes the write lock at once, carrying the settled marks held: first, so a mark made
   * while its ask was still pending stays refused, and dropped from memory only once committed.
   */
  private immediate<T>(body: () => T): T {
    const marks = this.settledMarks.size > 0 ? [...this.settledMarks] : undefined;
    const result = this.write.immediate(marks, body) as T;
    if (marks) for (const [askId, at] of marks) if (this.settledMarks.get(askId) === at) this.settledMarks.delete(askId);
    return result;
  }

  async hasEvent(eventId: string): Promise<boolean> {
    return this.statements.hasEvent.get(eventId) !== undefined;
  }

  async openAsk(sessionId: string, ask: NewAsk, now: number): Promise<void> {
    this.statements.insertAsk.run(newAskParameters(ask, sessionId, now));
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

  async audit(entry: AuditEntry): Promise<void> {
    this.statements.audit.run(entry);
  }
}

translateStoreErrors(SqliteHotPath.prototype);

/** The resumed turn's lease as the session row's columns; nulls leave them as they are. */
function leaseColumns(resolution: AskResolution): { leaseOwner: string | null; leaseUntil: number | null } {
  const lease = resumedLease(resolution);
  return { leaseOwner: lease?.owner ?? null, leaseUntil: lease?.until ?? null };
}

function claimParameters(id: string, lease: TurnLease): ClaimParameters {
  return { id, owner: lease.owner, until: heldUntil(lease).until, now: lease.now, displace: lease.displace ?? null };
}
