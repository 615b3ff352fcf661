import { ExternalAsks } from "../api/external-asks.js";
import { type AnswerInput, checkAnswer, maskAnswer } from "../ask/answer.js";
import { type AskResult, answeredResult } from "../ask/result.js";
import type { Logger } from "../logger.js";
import { createModelRetryPolicy } from "../loop/call-model.js";
import { buildSystemPrompt } from "../loop/system-prompt.js";
import type { ApiStore } from "../ports/api-store.js";
import type { AskApi } from "../ports/ask-api.js";
import type { Actor, AnswerOutcome, Conversation, InboundMessage, MessageOutcome, OpenAnswer, StopOutcome } from "../ports/conversation.js";
import type { Platform } from "../ports/ids.js";
import type { MaintenanceStore } from "../ports/maintenance-store.js";
import type { CardView, PlatformAdapter } from "../ports/platform-adapter.js";
import type { Ask, ConversationRef, Session, SessionStore } from "../ports/session-store.js";
import { ToolCatalog } from "../tools/tool-catalog.js";
import { ToolRules } from "../tools/tool-rules.js";
import { AnswerRules } from "./answer-rules.js";
import { AskEndings } from "./ask-endings.js";
import { AskResolver } from "./ask-resolver.js";
import { CardDesk } from "./card-desk.js";
import { ElicitationDesk } from "./elicitation-desk.js";
import type { EngineDependencies } from "./engine-dependencies.js";
import { Maintenance, SWEEP_INTERVAL_MS } from "./maintenance.js";
import { MessageRouter } from "./message-router.js";
import { createRuntimeSettings, type RuntimeSettings } from "./settings.js";
import { TaskTracker } from "./task-tracker.js";
import { leaseOwner } from "./turn-lease.js";
import { TurnRunner } from "./turn-runner.js";

/** A start catches up on conversations active this recently (well within the day event ids are kept)… */
const CATCH_UP_WINDOW_MS = 12 * 60 * 60 * 1000;
/** …and on this many of them at most, the most recent first. */
const CATCH_UP_LIMIT = 100;

/** Starts, suspends, resumes and recovers agent turns. Platform- and database-neutral. */
export class Engine implements Conversation {
  private readonly store: SessionStore & MaintenanceStore & ApiStore;
  private readonly settings: RuntimeSettings;
  private readonly adapters: Map<string, PlatformAdapter>;
  private readonly rules: AnswerRules;
  private readonly router: MessageRouter;
  private readonly endings = new AskEndings();
  private readonly external: ExternalAsks;
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
  private readonly unsubscribe: () => void;

  constructor(deps: EngineDependencies) {
    this.store = deps.store;
    this.settings = deps.settings ?? createRuntimeSettings();
    this.adapters = new Map(deps.adapters.map((adapter) => [adapter.platform, adapter]));
    this.rules = new AnswerRules(this.settings, deps.adminUserIds ?? []);
    this.clock = deps.clock ?? Date.now;
    this.logger = deps.logger;
    const adapterFor = (session: Session) => this.adapterFor(session);
    const track = (task: () => Promise<void>) => this.track(task);
    const rules = deps.toolRules ?? new ToolRules([], undefined);
    this.catalog = new ToolCatalog({
      builtIns: deps.tools ?? [],
      provider: deps.toolProvider,
      rules: () => rules.get(),
    });
    // Built in dependency order: each collaborator gets only what already exists.
    const owner = leaseOwner();
    this.cards = new CardDesk({ store: this.store, adapterFor, settings: this.settings, logger: this.logger, clock: this.clock, owner });
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
      leaseOwner: owner,
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
      endings: this.endings,
      isAdmin: (actor) => this.rules.isAdmin(actor),
      track,
      clock: this.clock,
    });
    this.external = new ExternalAsks({
      store: this.store,
      cards: this.cards,
      resolver: this.resolver,
      adapterFor: (platform) => this.adapters.get(platform),
      settings: this.settings,
      endings: this.endings,
      envTokens: deps.apiTokens ?? [],
      callbackSender: deps.callbackSender,
      clock: this.clock,
      track,
      logger: this.logger,
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
      owner,
      callbacks: this.external,
    });
    this.router = new MessageRouter({
      store: this.store,
      cards: this.cards,
      rules: this.rules,
      clock: this.clock,
      answer: (askId, actor, input) => this.answer(askId, actor, input),
      stop: (sessionId, actor) => this.stop(sessionId, actor),
      runTurn: (sessionId) => this.track(() => this.turns.run(sessionId)),
    });
    this.unsubscribe =
      deps.changes?.subscribe((change) => {
        if (change.kind === "stop-requested") this.turns.stopRequestedElsewhere(change.sessionId);
        else this.endings.endedElsewhere(change.askId);
      }) ?? (() => {});
  }

  /** The HTTP API's and the MCP server's way in: asks other programs put to people. */
  get api(): AskApi {
    return this.external;
  }

  handleMessage(message: InboundMessage): Promise<MessageOutcome> {
    return this.router.handle(message);
  }

  async answer(askId: string, actor: Actor, input: AnswerInput): Promise<AnswerOutcome> {
    const found = await this.loadPending(askId);
    if ("kind" in found) return found;
    const { ask, session } = found;
    if (!this.rules.mayAnswer(session, actor, ask))
      return { kind: "not-allowed", notice: this.rules.whoMayAnswer(session, "answer or stop", ask) };
    const check = checkAnswer(ask.spec, input);
    if (!check.ok) return { kind: "invalid", message: check.message, fieldErrors: check.fieldErrors };
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
    if (!this.rules.mayAnswer(found.session, actor, found.ask))
      return { kind: "not-allowed", notice: this.rules.whoMayAnswer(found.session, "answer or stop", found.ask) };
    const result: AskResult = { ok: false, cancelled: true };
    return this.resolver.resolve(found.ask, found.session, { status: "cancelled", result, storedResult: result, answer: null, actor });
  }

  async stop(sessionId: string, actor: Actor): Promise<StopOutcome> {
    const session = await this.store.getSession(sessionId);
    if (!session) return "not-running";
    const ask = session.status === "waiting" ? await this.store.pendingAsk(sessionId) : undefined;
    if (!this.rules.mayAnswer(session, actor, ask)) return "not-allowed";
    if (session.status === "running") {
      await this.store.requestStop(sessionId);
      // A tool call running here is cancelled now; a turn in another process sees the flag at its next step.
      this.turns.abort(sessionId);
      return "stopping";
    }
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
    if (!this.rules.mayAnswer(found.session, actor, found.ask))
      return { ok: false, outcome: { kind: "not-allowed", notice: this.rules.whoMayAnswer(found.session, "answer", found.ask) } };
    return { ok: true, card: this.cards.view(found.ask, found.session) };
  }

  async recentConversations(platform: Platform): Promise<{ since: number; conversations: ConversationRef[] }> {
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
    return this.rules.isAdmin(actor);
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

  /** Ends every API long-poll and MCP wait now (they answer with the ask as it stands): called first on shutdown. */
  endApiWaits(): void {
    this.external.endWaits();
  }

  /** Stops the sweeper and waits for in-flight work: turns finish or reach their next checkpoint. */
  async close(): Promise<void> {
    this.unsubscribe();
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    // A turn waiting minutes for a busy model must not hold up a restart; recovery picks it up.
    this.turns.shutdown();
    await this.tasks.idle();
  }

  idle(): Promise<void> {
    return this.tasks.idle();
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
