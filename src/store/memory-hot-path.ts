import { asSessionId, asUserId } from "../ports/ids.js";
import type { ChatMessage, ToolResultBlock } from "../ports/model-client.js";
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
} from "../ports/session-store.js";
import { copy, MemoryTables } from "./memory-tables.js";
import { endTransition, messageTransition } from "./transitions.js";

/** The hot path (SessionStore) in memory: events, sessions, turns, asks, the tool journal, the audit trail. */
export class MemoryHotPath implements SessionStore {
  constructor(protected readonly tables = new MemoryTables()) {}

  async claimEvent(eventId: string, now: number): Promise<boolean> {
    if (this.tables.events.has(eventId)) return false;
    this.tables.events.set(eventId, now);
    return true;
  }

  async hasEvent(eventId: string): Promise<boolean> {
    return this.tables.events.has(eventId);
  }

  async createSession(input: NewSession): Promise<Session> {
    return copy(this.tables.boundSession(input));
  }

  async getSession(id: string): Promise<Session | undefined> {
    const session = this.tables.sessions.get(id);
    return session ? copy(session) : undefined;
  }

  async takeTurn(sessionId: string, lease: TurnLease): Promise<TurnLeaseAnswer> {
    const session = this.tables.sessions.get(sessionId);
    if (session?.status !== "running") return { taken: false, holder: null };
    const held = this.tables.leases.get(sessionId);
    const free = !held || held.owner === lease.owner || held.until <= lease.now || held.owner === lease.displace;
    if (!free) return { taken: false, holder: held.owner };
    this.tables.leases.set(sessionId, heldUntil(lease));
    return { taken: true, session: copy(session) };
  }

  async claimCardPost(askId: string, lease: TurnLease): Promise<LeaseAnswer> {
    const ask = this.tables.asks.get(askId);
    return this.tables.claimPost(`card:${askId}`, ask?.status === "pending" && ask.cardRef === null, lease);
  }

  async claimReplyPost(key: string, lease: TurnLease): Promise<LeaseAnswer> {
    return this.tables.claimPost(`reply:${key}`, this.tables.replies.has(key), lease);
  }

  async releaseTurn(sessionId: string, owner: string): Promise<void> {
    if (this.tables.leases.get(sessionId)?.owner === owner) this.tables.leases.delete(sessionId);
  }

  async replyPosted(key: string): Promise<void> {
    this.tables.replies.delete(key);
    this.tables.postClaims.delete(`reply:${key}`);
  }

  async waitingSessionIn(place: Omit<ConversationRef, "thread">): Promise<Session | undefined> {
    const waiting = [...this.tables.sessions.values()].filter(
      (session) =>
        session.status === "waiting" &&
        session.conversation.platform === place.platform &&
        session.conversation.workspace === place.workspace &&
        session.conversation.channel === place.channel,
    );
    const newest = waiting.sort((a, b) => b.updatedAt - a.updatedAt)[0];
    return newest ? copy(newest) : undefined;
  }

  async findSession(conversation: ConversationRef): Promise<Session | undefined> {
    const id = this.tables.byKey.get(conversationKey(conversation));
    return id ? this.getSession(id) : undefined;
  }

  async loadMessages(sessionId: string): Promise<ChatMessage[]> {
    return copy(this.tables.messages.get(sessionId) ?? []);
  }

  async startTurnOrQueue(sessionId: string, message: ChatMessage | null, now: number, eventId?: string): Promise<StartOrQueue> {
    const session = this.tables.mustGet(sessionId);
    const next = messageTransition(session.status);
    if (next === "waiting") return "waiting";
    if (eventId !== undefined && !(await this.claimEvent(eventId, now))) return "duplicate";
    if (next === "queued") {
      if (message) this.tables.queueOf(sessionId).push(copy(message));
      return "queued";
    }
    if (message) this.tables.messages.get(sessionId)!.push(copy(message));
    beginTurn(session, now);
    return "started";
  }

  async commitStep(sessionId: string, step: Step): Promise<StepResult> {
    const session = this.tables.mustGet(sessionId);
    const history = this.tables.messages.get(sessionId)!;
    history.push(...copy(step.messages));
    if (step.messages.some((message) => message.role === "assistant")) session.turnIterations++;
    session.usage.inputTokens += step.usage.inputTokens;
    session.usage.outputTokens += step.usage.outputTokens;
    session.usage.cacheReadTokens += step.usage.cacheReadTokens;
    session.usage.cacheWriteTokens += step.usage.cacheWriteTokens;
    session.updatedAt = step.now;
    if (step.ask) {
      this.tables.addAsk(step.ask, sessionId, step.now);
      session.status = "waiting";
      session.turnAsks++;
      session.recoveryAttempts = 0;
      session.lastOutcome = "suspended";
      this.tables.leases.delete(sessionId);
      return { nextTurn: false };
    }
    if (!step.end) return { nextTurn: false };
    if (step.end.reply && !this.tables.replies.has(step.end.reply.key)) {
      const { claim, ...reply } = step.end.reply;
      this.tables.replies.set(reply.key, { reply: { ...reply, sessionId: asSessionId(sessionId) }, createdAt: step.now });
      if (claim) this.tables.postClaims.set(`reply:${reply.key}`, claim);
    }
    const queued = this.tables.queueOf(sessionId).splice(0);
    const next = endTransition(step.end.outcome, queued.length);
    session.status = next.status;
    session.lastOutcome = step.end.outcome;
    session.lastError = step.end.error ?? null;
    session.recoveryAttempts = 0;
    if (!next.nextTurn) {
      this.tables.leases.delete(sessionId);
      return { nextTurn: false };
    }
    history.push(...queued);
    beginTurn(session, step.now);
    return { nextTurn: true };
  }

  async getAsk(askId: string): Promise<Ask | undefined> {
    const ask = this.tables.asks.get(askId);
    return ask ? copy(ask) : undefined;
  }

  async getAskWithSession(askId: string): Promise<{ ask: Ask; session: Session } | undefined> {
    const ask = this.tables.asks.get(askId);
    const session = ask ? this.tables.sessions.get(ask.sessionId) : undefined;
    return ask && session ? { ask: copy(ask), session: copy(session) } : undefined;
  }

  async isStopRequested(sessionId: string): Promise<boolean> {
    return this.tables.sessions.get(sessionId)?.stopRequested ?? false;
  }

  async pendingAsk(sessionId: string): Promise<Ask | undefined> {
    for (const ask of this.tables.asks.values()) if (ask.sessionId === sessionId && ask.status === "pending") return copy(ask);
    return undefined;
  }

  async resolveAsk(askId: string, resolution: AskResolution): Promise<Ask | undefined> {
    const ask = this.tables.asks.get(askId);
    if (ask?.status !== "pending") return undefined;
    ask.status = resolution.status;
    ask.answer = resolution.answer ? copy(resolution.answer) : null;
    ask.answeredBy = resolution.answeredBy === null ? null : asUserId(resolution.answeredBy);
    ask.endedAt = resolution.now;
    const session = this.tables.mustGet(ask.sessionId);
    if (resolution.resultMessage) this.tables.messages.get(ask.sessionId)!.push(copy(resolution.resultMessage));
    if (resolution.sessionStatus !== null) session.status = resolution.sessionStatus;
    const lease = resumedLease(resolution);
    if (lease) this.tables.leases.set(session.id, lease);
    session.recoveryAttempts = 0;
    if (resolution.outcome) session.lastOutcome = resolution.outcome;
    session.updatedAt = resolution.now;
    this.tables.auditTrail.push({ ...resolution.audit });
    return copy(ask);
  }

  async setCardRef(askId: string, cardRef: string, deadline?: number): Promise<Ask["status"] | undefined> {
    const ask = this.tables.asks.get(askId);
    if (!ask) return undefined;
    ask.cardRef = cardRef;
    if (deadline !== undefined) ask.deadline = deadline;
    // Posted: nothing is left to claim (the databases keep the columns; here the entry goes).
    this.tables.postClaims.delete(`card:${askId}`);
    return ask.status;
  }

  async recordCardSettled(askId: string, now: number): Promise<void> {
    const ask = this.tables.asks.get(askId);
    if (ask && ask.status !== "pending") this.tables.settledCards.set(askId, now);
  }

  async openAsk(sessionId: string, ask: NewAsk, now: number): Promise<void> {
    this.tables.mustGet(sessionId);
    this.tables.addAsk(ask, sessionId, now);
  }

  async askForToolUse(sessionId: string, toolUseId: string): Promise<Ask | undefined> {
    const asks = [...this.tables.asks.values()].filter((ask) => ask.sessionId === sessionId && ask.toolUseId === toolUseId);
    const newest = asks.sort((a, b) => b.createdAt - a.createdAt)[0];
    return newest ? copy(newest) : undefined;
  }

  async getToolCall(sessionId: string, toolUseId: string): Promise<ToolCallRecord | undefined> {
    const record = this.tables.toolCalls.get(`${sessionId}:${toolUseId}`);
    return record ? copy(record) : undefined;
  }

  async startToolCall(call: NewToolCall): Promise<boolean> {
    const key = `${call.sessionId}:${call.toolUseId}`;
    if (this.tables.toolCalls.has(key)) return false;
    this.tables.toolCalls.set(key, {
      sessionId: asSessionId(call.sessionId),
      toolUseId: call.toolUseId,
      name: call.name,
      argumentsHash: call.argumentsHash,
      status: "started",
      result: null,
      startedAt: call.now,
      finishedAt: null,
    });
    return true;
  }

  async finishToolCall(sessionId: string, toolUseId: string, result: ToolResultBlock, now: number): Promise<void> {
    const record = this.tables.toolCalls.get(`${sessionId}:${toolUseId}`);
    if (!record) throw new Error(`no started tool call ${toolUseId}`);
    record.status = "finished";
    record.result = copy(result);
    record.finishedAt = now;
  }

  async requestStop(sessionId: string): Promise<void> {
    this.tables.mustGet(sessionId).stopRequested = true;
  }

  async audit(entry: AuditEntry): Promise<void> {
    this.tables.auditTrail.push({ ...entry });
  }
}

function beginTurn(session: Session, now: number): void {
  session.status = "running";
  session.turnCount++;
  session.turnAsks = 0;
  session.turnIterations = 0;
  session.stopRequested = false;
  session.lastError = null;
  session.updatedAt = now;
}
