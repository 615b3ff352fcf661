import type { ApiStore, ExternalAsk, ExternalCreate, NewExternalAsk, StoredToken } from "../ports/api-store.js";
import type { PurgeCounts, SessionFilter, Storage, StoreStats } from "../ports/maintenance-store.js";
import type { ChatMessage, ToolResultBlock } from "../ports/model-client.js";
import {
  type Ask,
  type AskResolution,
  type AuditEntry,
  type ConversationRef,
  conversationKey,
  type NewAsk,
  type NewSession,
  type NewToolCall,
  type PendingReply,
  pendingAskOf,
  type Session,
  type SessionStatus,
  type StartOrQueue,
  type Step,
  type StepResult,
  type ToolCallRecord,
  type TurnLease,
} from "../ports/session-store.js";
import { MemoryApiRecords } from "./memory-api-records.js";
import { computeStats } from "./memory-stats.js";
import { endTransition, messageTransition } from "./transitions.js";

/** The SessionStore in memory, for tests and benches; it passes the same contract suite as SQLite. */
export class MemorySessionStore implements Storage, ApiStore {
  private readonly events = new Map<string, number>();
  private readonly sessions = new Map<string, Session>();
  private readonly byKey = new Map<string, string>();
  private readonly messages = new Map<string, ChatMessage[]>();
  private readonly queued = new Map<string, ChatMessage[]>();
  /** Final answers not yet posted, in the order their turns ended. */
  private readonly replies = new Map<string, { reply: PendingReply; createdAt: number }>();
  /** Who runs each session's turn, until when. */
  private readonly leases = new Map<string, { owner: string; until: number }>();
  private readonly asks = new Map<string, Ask>();
  private readonly settings = new Map<string, string>();
  private readonly toolCalls = new Map<string, ToolCallRecord>();
  /** Ask id → when its card was settled; kept beside the asks, as the databases keep a column. */
  private readonly settledCards = new Map<string, number>();
  private readonly api = new MemoryApiRecords();
  readonly auditTrail: AuditEntry[] = [];

  async claimEvent(eventId: string, now: number): Promise<boolean> {
    if (this.events.has(eventId)) return false;
    this.events.set(eventId, now);
    return true;
  }

  async hasEvent(eventId: string): Promise<boolean> {
    return this.events.has(eventId);
  }

  async pruneEvents(before: number): Promise<number> {
    let pruned = 0;
    for (const [eventId, at] of this.events) {
      if (at >= before) continue;
      this.events.delete(eventId);
      pruned++;
    }
    return pruned;
  }

  async createSession(input: NewSession): Promise<Session> {
    return copy(this.boundSession(input));
  }

  /** The conversation's session, created when it has none: synchronous, so callers stay atomic. */
  private boundSession(input: NewSession): Session {
    const key = conversationKey(input.conversation);
    const existing = this.byKey.get(key);
    if (existing) return this.sessions.get(existing)!;
    const session: Session = {
      id: input.id,
      conversation: { ...input.conversation },
      ownerId: input.ownerId,
      status: "idle",
      lastOutcome: null,
      lastError: null,
      turnCount: 0,
      turnAsks: 0,
      turnIterations: 0,
      recoveryAttempts: 0,
      stopRequested: false,
      usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
      createdAt: input.now,
      updatedAt: input.now,
    };
    this.sessions.set(session.id, session);
    this.byKey.set(key, session.id);
    this.messages.set(session.id, []);
    return session;
  }

  async getSession(id: string): Promise<Session | undefined> {
    const session = this.sessions.get(id);
    return session ? copy(session) : undefined;
  }

  async takeTurn(sessionId: string, lease: TurnLease): Promise<{ taken: true } | { taken: false; holder: string | null }> {
    const session = this.sessions.get(sessionId);
    if (session?.status !== "running") return { taken: false, holder: null };
    const held = this.leases.get(sessionId);
    const free = !held || held.owner === lease.owner || held.until <= lease.now || held.owner === lease.displace;
    if (!free) return { taken: false, holder: held.owner };
    this.leases.set(sessionId, { owner: lease.owner, until: lease.now + lease.ttlMs });
    return { taken: true };
  }

  async releaseTurn(sessionId: string, owner: string): Promise<void> {
    if (this.leases.get(sessionId)?.owner === owner) this.leases.delete(sessionId);
  }

  async replyPosted(key: string): Promise<void> {
    this.replies.delete(key);
  }

  async listPendingReplies(before: number, limit: number): Promise<PendingReply[]> {
    return [...this.replies.values()]
      .filter((entry) => entry.createdAt < before)
      .slice(0, limit)
      .map((entry) => copy(entry.reply));
  }

  async waitingSessionIn(place: Omit<ConversationRef, "thread">): Promise<Session | undefined> {
    const waiting = [...this.sessions.values()].filter(
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
    const id = this.byKey.get(conversationKey(conversation));
    return id ? this.getSession(id) : undefined;
  }

  async loadMessages(sessionId: string): Promise<ChatMessage[]> {
    return copy(this.messages.get(sessionId) ?? []);
  }

  async startTurnOrQueue(sessionId: string, message: ChatMessage | null, now: number, eventId?: string): Promise<StartOrQueue> {
    const session = this.mustGet(sessionId);
    const next = messageTransition(session.status);
    if (next === "waiting") return "waiting";
    if (eventId !== undefined && !(await this.claimEvent(eventId, now))) return "duplicate";
    if (next === "queued") {
      if (message) this.queueOf(sessionId).push(copy(message));
      return "queued";
    }
    if (message) this.messages.get(sessionId)!.push(copy(message));
    beginTurn(session, now);
    return "started";
  }

  async commitStep(sessionId: string, step: Step): Promise<StepResult> {
    const session = this.mustGet(sessionId);
    const history = this.messages.get(sessionId)!;
    history.push(...copy(step.messages));
    if (step.messages.some((message) => message.role === "assistant")) session.turnIterations++;
    session.usage.inputTokens += step.usage.inputTokens;
    session.usage.outputTokens += step.usage.outputTokens;
    session.usage.cacheReadTokens += step.usage.cacheReadTokens;
    session.usage.cacheWriteTokens += step.usage.cacheWriteTokens;
    session.updatedAt = step.now;
    if (step.ask) {
      this.asks.set(step.ask.id, pendingAskOf(copy(step.ask), sessionId, step.now));
      session.status = "waiting";
      session.turnAsks++;
      session.recoveryAttempts = 0;
      session.lastOutcome = "suspended";
      return { nextTurn: false };
    }
    if (!step.end) return { nextTurn: false };
    if (step.end.reply && !this.replies.has(step.end.reply.key))
      this.replies.set(step.end.reply.key, { reply: { ...step.end.reply, sessionId }, createdAt: step.now });
    const queued = this.queueOf(sessionId).splice(0);
    const next = endTransition(step.end.outcome, queued.length);
    session.status = next.status;
    session.lastOutcome = step.end.outcome;
    session.lastError = step.end.error ?? null;
    session.recoveryAttempts = 0;
    if (!next.nextTurn) return { nextTurn: false };
    history.push(...queued);
    beginTurn(session, step.now);
    return { nextTurn: true };
  }

  async getAsk(askId: string): Promise<Ask | undefined> {
    const ask = this.asks.get(askId);
    return ask ? copy(ask) : undefined;
  }

  async getAskWithSession(askId: string): Promise<{ ask: Ask; session: Session } | undefined> {
    const ask = this.asks.get(askId);
    const session = ask ? this.sessions.get(ask.sessionId) : undefined;
    return ask && session ? { ask: copy(ask), session: copy(session) } : undefined;
  }

  async isStopRequested(sessionId: string): Promise<boolean> {
    return this.sessions.get(sessionId)?.stopRequested ?? false;
  }

  async pendingAsk(sessionId: string): Promise<Ask | undefined> {
    for (const ask of this.asks.values()) if (ask.sessionId === sessionId && ask.status === "pending") return copy(ask);
    return undefined;
  }

  async resolveAsk(askId: string, resolution: AskResolution): Promise<Ask | undefined> {
    const ask = this.asks.get(askId);
    if (ask?.status !== "pending") return undefined;
    ask.status = resolution.status;
    ask.answer = resolution.answer ? copy(resolution.answer) : null;
    ask.answeredBy = resolution.answeredBy;
    ask.endedAt = resolution.now;
    const session = this.mustGet(ask.sessionId);
    if (resolution.resultMessage) this.messages.get(ask.sessionId)!.push(copy(resolution.resultMessage));
    if (resolution.sessionStatus !== null) session.status = resolution.sessionStatus;
    session.recoveryAttempts = 0;
    if (resolution.outcome) session.lastOutcome = resolution.outcome;
    session.updatedAt = resolution.now;
    this.auditTrail.push({ ...resolution.audit });
    return copy(ask);
  }

  async setCardRef(askId: string, cardRef: string, deadline: number): Promise<Ask["status"] | undefined> {
    const ask = this.asks.get(askId);
    if (!ask) return undefined;
    ask.cardRef = cardRef;
    ask.deadline = deadline;
    return ask.status;
  }

  async recordCardSettled(askId: string, now: number): Promise<void> {
    const ask = this.asks.get(askId);
    if (ask && ask.status !== "pending") this.settledCards.set(askId, now);
  }

  async listUnsettledAsks(since: number, limit: number): Promise<Ask[]> {
    return [...this.asks.values()]
      .filter((ask) => ask.status !== "pending" && ask.cardRef !== null && (ask.endedAt ?? 0) >= since && !this.settledCards.has(ask.id))
      .sort((a, b) => (a.endedAt ?? 0) - (b.endedAt ?? 0))
      .slice(0, limit)
      .map(copy);
  }

  async listUnpostedAsks(): Promise<Ask[]> {
    return [...this.asks.values()].filter((ask) => ask.status === "pending" && ask.cardRef === null).map(copy);
  }

  async listExpiredAsks(now: number, limit: number): Promise<Ask[]> {
    return [...this.asks.values()]
      .filter((ask) => ask.status === "pending" && ask.deadline <= now && ask.cardRef !== null)
      .sort((a, b) => a.deadline - b.deadline)
      .slice(0, limit)
      .map(copy);
  }

  async listRecentConversations(platform: string, since: number, limit: number): Promise<ConversationRef[]> {
    return [...this.sessions.values()]
      .filter((session) => session.conversation.platform === platform && session.updatedAt >= since)
      .sort((a, b) => b.updatedAt - a.updatedAt)
      .slice(0, limit)
      .map((session) => copy(session.conversation));
  }

  async listSessionsByStatus(status: SessionStatus): Promise<Session[]> {
    return [...this.sessions.values()].filter((session) => session.status === status).map(copy);
  }

  async openAsk(sessionId: string, ask: NewAsk, now: number): Promise<void> {
    this.mustGet(sessionId);
    this.asks.set(ask.id, pendingAskOf(copy(ask), sessionId, now));
  }

  async askForToolUse(sessionId: string, toolUseId: string): Promise<Ask | undefined> {
    const asks = [...this.asks.values()].filter((ask) => ask.sessionId === sessionId && ask.toolUseId === toolUseId);
    const newest = asks.sort((a, b) => b.createdAt - a.createdAt)[0];
    return newest ? copy(newest) : undefined;
  }

  async getToolCall(sessionId: string, toolUseId: string): Promise<ToolCallRecord | undefined> {
    const record = this.toolCalls.get(`${sessionId}:${toolUseId}`);
    return record ? copy(record) : undefined;
  }

  async startToolCall(call: NewToolCall): Promise<boolean> {
    const key = `${call.sessionId}:${call.toolUseId}`;
    if (this.toolCalls.has(key)) return false;
    this.toolCalls.set(key, {
      sessionId: call.sessionId,
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
    const record = this.toolCalls.get(`${sessionId}:${toolUseId}`);
    if (!record) throw new Error(`no started tool call ${toolUseId}`);
    record.status = "finished";
    record.result = copy(result);
    record.finishedAt = now;
  }

  async requestStop(sessionId: string): Promise<void> {
    this.mustGet(sessionId).stopRequested = true;
  }

  async countRecovery(sessionId: string): Promise<number> {
    return ++this.mustGet(sessionId).recoveryAttempts;
  }

  async audit(entry: AuditEntry): Promise<void> {
    this.auditTrail.push({ ...entry });
  }

  async listSessions(filter: SessionFilter): Promise<Session[]> {
    return [...this.sessions.values()]
      .filter((session) => !filter.status || session.status === filter.status)
      .filter((session) => !filter.channel || session.conversation.channel === filter.channel)
      .filter((session) => !filter.ownerId || session.ownerId === filter.ownerId)
      .sort((a, b) => b.updatedAt - a.updatedAt || a.id.localeCompare(b.id))
      .slice(filter.offset, filter.offset + filter.limit)
      .map(copy);
  }

  async listAsks(sessionId: string): Promise<Ask[]> {
    return [...this.asks.values()].filter((ask) => ask.sessionId === sessionId).map(copy);
  }

  async stats(): Promise<StoreStats> {
    return computeStats(this.sessions.values(), this.asks.values());
  }

  async purgeEnded(before: number): Promise<PurgeCounts> {
    const counts = { sessions: 0, messages: 0, asks: 0 };
    for (const session of [...this.sessions.values()]) {
      if ((session.status !== "idle" && session.status !== "failed") || session.updatedAt >= before) continue;
      counts.sessions++;
      counts.messages += this.messages.get(session.id)?.length ?? 0;
      for (const [id, ask] of this.asks) {
        if (ask.sessionId !== session.id) continue;
        this.asks.delete(id);
        this.settledCards.delete(id);
        this.api.forget(new Set([id]));
        counts.asks++;
      }
      this.messages.delete(session.id);
      this.queued.delete(session.id);
      for (const [key, record] of this.toolCalls) if (record.sessionId === session.id) this.toolCalls.delete(key);
      this.sessions.delete(session.id);
      this.byKey.delete(conversationKey(session.conversation));
    }
    return counts;
  }

  async loadSettings(): Promise<Record<string, string>> {
    return Object.fromEntries(this.settings);
  }

  async saveSetting(key: string, value: string): Promise<void> {
    this.settings.set(key, value);
  }

  async createExternalAsk(input: NewExternalAsk): Promise<ExternalCreate> {
    const earlier = input.idempotencyKey === null ? undefined : this.api.byIdempotencyKey(input.token, input.idempotencyKey);
    if (earlier) return { kind: "replayed", external: earlier };
    const session = this.sessions.get(this.byKey.get(conversationKey(input.session.conversation)) ?? "");
    if (session && session.status !== "idle" && session.status !== "failed") return { kind: "busy" };
    const target = this.boundSession(input.session);
    this.asks.set(input.ask.id, pendingAskOf(copy(input.ask), target.id, input.now));
    target.status = "waiting";
    target.updatedAt = input.now;
    this.api.add({
      askId: input.ask.id,
      token: input.token,
      metadata: copy(input.metadata),
      callbackUrl: input.callbackUrl,
      idempotencyKey: input.idempotencyKey,
      requestHash: input.requestHash,
      callbackAttempts: 0,
      callbackNextAt: null,
      callbackDoneAt: null,
      callbackOutcome: null,
    });
    return { kind: "created", askId: input.ask.id, sessionId: target.id };
  }

  async getExternalAsk(askId: string): Promise<ExternalAsk | undefined> {
    return this.api.get(askId);
  }

  async findByIdempotencyKey(token: string, key: string): Promise<ExternalAsk | undefined> {
    return this.api.byIdempotencyKey(token, key);
  }

  async listDueCallbacks(now: number, limit: number): Promise<Array<{ external: ExternalAsk; ask: Ask }>> {
    return this.api.due(now, limit, (askId) => {
      const ask = this.asks.get(askId);
      return ask ? copy(ask) : undefined;
    });
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

  async ping(): Promise<void> {}

  async close(): Promise<void> {}

  private mustGet(sessionId: string): Session {
    const session = this.sessions.get(sessionId);
    if (!session) throw new Error(`no session ${sessionId}`);
    return session;
  }

  private queueOf(sessionId: string): ChatMessage[] {
    const queue = this.queued.get(sessionId) ?? [];
    this.queued.set(sessionId, queue);
    return queue;
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

function copy<T>(value: T): T {
  return structuredClone(value);
}
