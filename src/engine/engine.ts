import { randomUUID } from "node:crypto";
import { type AnswerInput, answerFromText, checkAnswer, maskAnswer } from "../ask/answer.js";
import { type AskResult, answeredResult } from "../ask/result.js";
import type { Logger } from "../logger.js";
import { createModelRetryPolicy, type ModelRetryPolicy } from "../loop/call-model.js";
import { userText } from "../loop/history.js";
import type { LoopResult } from "../loop/run-loop.js";
import { buildSystemPrompt } from "../loop/system-prompt.js";
import type { Tool } from "../loop/tools.js";
import type { Actor, AnswerOutcome, Conversation, InboundMessage, MessageOutcome, OpenAnswer, StopOutcome } from "../ports/conversation.js";
import type { MaintenanceStore } from "../ports/maintenance-store.js";
import type { ModelClient } from "../ports/model-client.js";
import type { CardView, PlatformAdapter } from "../ports/platform-adapter.js";
import { mention, type RichText, rich } from "../ports/rich-text.js";
import type { Ask, ConversationRef, Session, SessionStore } from "../ports/session-store.js";
import type { ToolProvider } from "../ports/tool-provider.js";
import { ToolCatalog } from "../tools/tool-catalog.js";
import { ToolRules } from "../tools/tool-rules.js";
import { AskResolver } from "./ask-resolver.js";
import { CardDesk } from "./card-desk.js";
import { ElicitationDesk } from "./elicitation-desk.js";
import { Maintenance, SWEEP_INTERVAL_MS } from "./maintenance.js";
import { createRuntimeSettings, type RuntimeSettings } from "./settings.js";
import { TaskTracker } from "./task-tracker.js";
import { leaseOwner } from "./turn-lease.js";
import { TurnRunner } from "./turn-runner.js";

export interface EngineDependencies {
  store: SessionStore & MaintenanceStore;
  model: ModelClient;
  adapters: PlatformAdapter[];
  logger: Logger;
  /** Parley's own tools (current_time). */
  tools?: Tool[];
  /** Tools from MCP servers. */
  toolProvider?: ToolProvider;
  /** Policy rules in force (TOOL_POLICY and admins'); read-only tools run, others ask, when absent. */
  toolRules?: ToolRules;
  /** How long a server's elicitation form may wait (TOOL_TIMEOUT_S: the call that asked lives no longer). */
  toolTimeoutSeconds?: number;
  /** The system prompt, the team's instructions included. */
  systemPrompt?: string;
  settings?: RuntimeSettings;
  adminUserIds?: string[];
  clock?: () => number;
  /** How a busy model is waited out (MODEL_RETRY_MAX_S); tests give a sleep that takes no time. */
  modelRetry?: Partial<ModelRetryPolicy>;
  /** Observes every turn's result (tests, benches). */
  onTurnEnd?: (sessionId: string, result: LoopResult) => void;
}

/** A start catches up on conversations active this recently (well within the day event ids are kept)… */
const CATCH_UP_WINDOW_MS = 12 * 60 * 60 * 1000;
/** …and on this many of them at most, the most recent first. */
const CATCH_UP_LIMIT = 100;

/**
 * A message to the bot that only says stop: `stop`, `Stop.`, `please stop!`, `/stop`, `cancel turn`. Case, punctuation
 * and "please" aside, nothing else may be in it: "stop the deploy" is a request, or an answer to a pending question.
 */
export function isStopRequest(text: string): boolean {
  const words = text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 0 && word !== "please");
  return (words.length === 1 && words[0] === "stop") || words.join(" ") === "cancel turn";
}

/** Starts, suspends, resumes and recovers agent turns. Platform- and database-neutral. */
export class Engine implements Conversation {
  private readonly store: SessionStore & MaintenanceStore;
  private readonly settings: RuntimeSettings;
  private readonly adapters: Map<string, PlatformAdapter>;
  private readonly adminUserIds: Set<string>;
  private readonly clock: () => number;
  private readonly logger: Logger;
  private readonly tasks = new TaskTracker();
  private readonly cards: CardDesk;
  private readonly elicitations: ElicitationDesk;
  private readonly turns: TurnRunner;
  private readonly resolver: AskResolver;
  private readonly maintenance: Maintenance;
  /** Every tool and its policy, for the loop and for `/parley tools`. */
  readonly catalog: ToolCatalog;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(deps: EngineDependencies) {
    this.store = deps.store;
    this.settings = deps.settings ?? createRuntimeSettings();
    this.adapters = new Map(deps.adapters.map((adapter) => [adapter.platform, adapter]));
    this.adminUserIds = new Set(deps.adminUserIds ?? []);
    this.clock = deps.clock ?? Date.now;
    this.logger = deps.logger;
    const adapterFor = (session: Session) => this.adapterFor(session);
    const track = (task: () => Promise<void>) => this.track(task);
    const rules = deps.toolRules ?? new ToolRules([], undefined);
    this.catalog = new ToolCatalog({
      builtIns: deps.tools ?? [],
      ...(deps.toolProvider ? { provider: deps.toolProvider } : {}),
      rules: () => rules.get(),
    });
    // Built in dependency order: each collaborator gets only what already exists.
    this.cards = new CardDesk({ store: this.store, adapterFor, settings: this.settings, logger: this.logger, clock: this.clock });
    this.elicitations = new ElicitationDesk({
      store: this.store,
      cards: this.cards,
      clock: this.clock,
      timeoutSeconds: deps.toolTimeoutSeconds ?? 120,
      track,
    });
    this.turns = new TurnRunner({
      store: this.store,
      model: deps.model,
      catalog: this.catalog,
      systemPrompt: deps.systemPrompt ?? buildSystemPrompt(undefined),
      settings: this.settings,
      adapterFor,
      cards: this.cards,
      elicitations: this.elicitations,
      leaseOwner: leaseOwner(),
      logger: this.logger,
      clock: this.clock,
      modelRetry: createModelRetryPolicy(deps.modelRetry),
      onTurnEnd: deps.onTurnEnd ?? (() => {}),
    });
    this.resolver = new AskResolver({
      store: this.store,
      cards: this.cards,
      turns: this.turns,
      elicitations: this.elicitations,
      adapterFor,
      isAdmin: (actor) => this.isAdmin(actor),
      track,
      clock: this.clock,
    });
    this.maintenance = new Maintenance({
      store: this.store,
      resolver: this.resolver,
      cards: this.cards,
      turns: this.turns,
      elicitations: this.elicitations,
      adapterFor,
      track,
      clock: this.clock,
      logger: this.logger,
    });
  }

  async handleMessage(message: InboundMessage): Promise<MessageOutcome> {
    // A cheap early exit; the claim itself is made atomically with whatever the message changes.
    if (await this.store.hasEvent(message.eventId)) return "duplicate";
    return this.routeMessage(message, 0);
  }

  private async routeMessage(message: InboundMessage, attempt: number): Promise<MessageOutcome> {
    const isStop = message.addressedToBot && isStopRequest(message.text);
    let session = await this.store.findSession(message.conversation);
    if (!session && message.directTopLevel && !isStop) {
      const answered = await this.answerInDirect(message);
      if (answered) return answered;
    }
    if (!session) {
      if (!message.addressedToBot || isStop) return "ignored";
      session = await this.store.createSession({
        id: randomUUID(),
        conversation: message.conversation,
        ownerId: message.author.id,
        now: this.clock(),
      });
    }
    const claim = () => this.store.claimEvent(message.eventId, this.clock());
    if (isStop) {
      if (!(await claim())) return "duplicate";
      const stop = await this.stop(session.id, message.author);
      if (stop === "not-allowed") await this.cards.notify(session, message.author.id, this.whoMayAnswer(session, "answer or stop"));
      return stop === "not-allowed" ? "rejected" : "stopping";
    }
    if (session.status === "waiting") {
      const ask = await this.store.pendingAsk(session.id);
      if (ask) return (await claim()) ? this.answerFromMessage(session, ask, message) : "duplicate";
    }
    const mayStartTurn = message.addressedToBot || message.author.id === session.ownerId;
    if (!mayStartTurn) return "ignored";
    const label = message.author.name ? `${message.author.name} (${message.author.id})` : message.author.id;
    // The event is claimed in the same transaction that stores the message: a crash cannot split the two.
    const state = await this.store.startTurnOrQueue(session.id, userText(label, message.text), this.clock(), message.eventId);
    if (state === "duplicate") return "duplicate";
    if (state === "started") {
      this.track(() => this.turns.run(session.id));
      return "started";
    }
    if (state === "queued") return "queued";
    // The session started waiting between our read and our write: read it again as an answer.
    return attempt < 2 ? this.routeMessage(message, attempt + 1) : "ignored";
  }

  /**
   * A top-level DM message answers the question pending in one of the DM's threads, when its author may answer it
   * and it reads as a valid answer; anything else (a new request the question cannot take) starts its own session.
   */
  private async answerInDirect(message: InboundMessage): Promise<MessageOutcome | undefined> {
    const { platform, workspace, channel } = message.conversation;
    const waiting = await this.store.waitingSessionIn({ platform, workspace, channel });
    if (!waiting || !this.mayAnswer(waiting, message.author)) return undefined;
    const ask = await this.store.pendingAsk(waiting.id);
    if (!ask || !checkAnswer(ask.spec, answerFromText(ask.spec, message.text)).ok) return undefined;
    if (!(await this.store.claimEvent(message.eventId, this.clock()))) return "duplicate";
    return this.answerFromMessage(waiting, ask, message);
  }

  private async answerFromMessage(session: Session, ask: Ask, message: InboundMessage): Promise<MessageOutcome> {
    const outcome = await this.answer(ask.id, message.author, answerFromText(ask.spec, message.text));
    if (outcome.kind === "accepted") return "answered";
    if (outcome.kind === "not-allowed") await this.cards.notify(session, message.author.id, outcome.notice);
    if (outcome.kind === "invalid") await this.cards.notify(session, message.author.id, [outcome.message]);
    return "rejected";
  }

  async answer(askId: string, actor: Actor, input: AnswerInput): Promise<AnswerOutcome> {
    const found = await this.loadPending(askId);
    if ("kind" in found) return found;
    const { ask, session } = found;
    if (!this.mayAnswer(session, actor)) return { kind: "not-allowed", notice: this.whoMayAnswer(session, "answer or stop") };
    const check = checkAnswer(ask.spec, input);
    if (!check.ok) return { kind: "invalid", message: check.message, ...(check.fieldErrors ? { fieldErrors: check.fieldErrors } : {}) };
    const masked = maskAnswer(ask.spec, check.value);
    return this.resolver.resolve(ask, session, {
      status: "answered",
      result: answeredResult(check.value, check.other),
      storedResult: answeredResult(masked, check.other),
      answer: { value: masked, ...(check.other ? { other: true as const } : {}) },
      actor,
    });
  }

  async cancel(askId: string, actor: Actor): Promise<AnswerOutcome> {
    const found = await this.loadPending(askId);
    if ("kind" in found) return found;
    if (!this.mayAnswer(found.session, actor)) return { kind: "not-allowed", notice: this.whoMayAnswer(found.session, "answer or stop") };
    const result: AskResult = { ok: false, cancelled: true };
    return this.resolver.resolve(found.ask, found.session, { status: "cancelled", result, storedResult: result, answer: null, actor });
  }

  async stop(sessionId: string, actor: Actor): Promise<StopOutcome> {
    const session = await this.store.getSession(sessionId);
    if (!session) return "not-running";
    if (!this.mayAnswer(session, actor)) return "not-allowed";
    if (session.status === "running") {
      await this.store.requestStop(sessionId);
      // A tool call running here is cancelled now; a turn in another process sees the flag at its next step.
      this.turns.abort(sessionId);
      return "stopping";
    }
    const ask = session.status === "waiting" ? await this.store.pendingAsk(sessionId) : undefined;
    if (!ask) return "not-running";
    const result: AskResult = { ok: false, cancelled: true };
    const outcome = await this.resolver.resolve(ask, session, {
      status: "cancelled",
      result,
      storedResult: result,
      answer: null,
      actor,
      stop: true,
    });
    return outcome.kind === "accepted" ? "stopped" : "not-running";
  }

  async openAnswer(askId: string, actor: Actor): Promise<OpenAnswer> {
    const found = await this.loadPending(askId);
    if ("kind" in found) return { ok: false, outcome: found };
    if (!this.mayAnswer(found.session, actor))
      return { ok: false, outcome: { kind: "not-allowed", notice: this.whoMayAnswer(found.session, "answer") } };
    return { ok: true, card: this.cards.view(found.ask, found.session) };
  }

  async recentConversations(platform: string): Promise<{ since: number; conversations: ConversationRef[] }> {
    // Well within the event ids' retention: a message older than that which came back would not be known as seen.
    const since = this.clock() - CATCH_UP_WINDOW_MS;
    return { since, conversations: await this.store.listRecentConversations(platform, since, CATCH_UP_LIMIT) };
  }

  async pendingCard(conversation: ConversationRef): Promise<CardView | undefined> {
    const session = await this.store.findSession(conversation);
    const ask = session?.status === "waiting" ? await this.store.pendingAsk(session.id) : undefined;
    return session && ask ? this.cards.view(ask, session) : undefined;
  }

  private async loadPending(
    askId: string,
  ): Promise<{ ask: Ask; session: Session } | Extract<AnswerOutcome, { kind: "unknown-ask" | "already-ended" }>> {
    const found = await this.store.getAskWithSession(askId);
    if (!found) return { kind: "unknown-ask" };
    if (found.ask.status !== "pending") return { kind: "already-ended", status: found.ask.status };
    return found;
  }

  /** Ends asks whose deadline passed with `{ok:false, timeout:true}`; re-posts lost cards; re-runs stalled turns. */
  sweep(): Promise<number> {
    return this.maintenance.sweep();
  }

  /** On start: post cards that never went out, time out what expired, re-run turns a crash interrupted. */
  recover(): Promise<void> {
    return this.maintenance.recover();
  }

  /** Re-runs a failed session's turn from its last persisted message. */
  async retry(sessionId: string): Promise<boolean> {
    const session = await this.store.getSession(sessionId);
    if (session?.status !== "failed") return false;
    const state = await this.store.startTurnOrQueue(sessionId, null, this.clock());
    if (state !== "started") return false;
    this.track(() => this.turns.run(sessionId));
    return true;
  }

  /** Admin comes from the platform (the adapter's `isAdmin`) or from ADMIN_USER_IDS, never from the model. */
  isAdmin(actor: Actor): boolean {
    return actor.isAdmin === true || this.adminUserIds.has(actor.id);
  }

  /** Runs the timeout sweeper every `intervalMs` until close(). */
  startSweeper(intervalMs = SWEEP_INTERVAL_MS): void {
    this.sweeper ??= setInterval(() => {
      this.track(async () => {
        await this.sweep();
      });
    }, intervalMs);
    this.sweeper.unref();
  }

  /** Stops the sweeper and waits for in-flight work: turns finish or reach their next checkpoint. */
  async close(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    // A turn waiting minutes for a busy model must not hold up a restart; recovery picks it up.
    this.turns.shutdown();
    await this.tasks.idle();
  }

  idle(): Promise<void> {
    return this.tasks.idle();
  }

  private mayAnswer(session: Session, actor: Actor): boolean {
    return this.settings.get().answerPolicy === "thread" || actor.id === session.ownerId || this.isAdmin(actor);
  }

  private whoMayAnswer(session: Session, what: "answer" | "answer or stop"): RichText {
    return rich`Only ${mention(session.ownerId)} or an admin can ${what} this.`;
  }

  private adapterFor(session: Session): PlatformAdapter {
    const adapter = this.adapters.get(session.conversation.platform);
    if (!adapter) throw new Error(`no adapter for platform ${session.conversation.platform}`);
    return adapter;
  }

  private track(task: () => Promise<void>): void {
    this.tasks.run(task, (error) => this.logger.error({ err: error }, "background-task failed"));
  }
}
