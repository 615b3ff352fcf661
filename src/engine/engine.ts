import { randomUUID } from "node:crypto";
import { type AnswerInput, answerFromText, checkAnswer, hasSecret, maskAnswer } from "../ask/answer.js";
import { describeAnswer } from "../ask/describe.js";
import { type AskResult, answeredResult, resultText } from "../ask/result.js";
import type { Logger } from "../logger.js";
import { userText } from "../loop/history.js";
import type { LoopResult } from "../loop/run-loop.js";
import type { Tool } from "../loop/tools.js";
import type { ChatMessage, ModelClient } from "../ports/model-client.js";
import type { CardView, PlatformAdapter, Settlement } from "../ports/platform-adapter.js";
import type { Ask, AskStatus, ConversationRef, Session, SessionStore, TurnOutcome } from "../ports/session-store.js";
import { CardDesk } from "./card-desk.js";
import { DEFAULT_SETTINGS, type EngineSettings } from "./settings.js";
import { TaskTracker } from "./task-tracker.js";
import { TurnRunner } from "./turn-runner.js";
import type { Actor, AnswerOutcome, InboundMessage, MessageOutcome, StopOutcome } from "./types.js";

export interface EngineDependencies {
  store: SessionStore;
  model: ModelClient;
  adapters: PlatformAdapter[];
  logger: Logger;
  tools?: Tool[];
  settings?: EngineSettings;
  adminUserIds?: string[];
  clock?: () => number;
}

/** Turns interrupted by a crash are re-run this many times before the session is failed visibly. */
export const MAX_RECOVERY_ATTEMPTS = 2;
/** A card still unposted this long after its ask was written is posted again by the sweeper. */
export const UNPOSTED_GRACE_MS = 10_000;
export const SWEEP_INTERVAL_MS = 5000;
/** Event ids are kept a day: far longer than Slack's retries (minutes) or a Discord RESUME replay. */
export const EVENT_RETENTION_MS = 24 * 60 * 60 * 1000;
const EVENT_PRUNE_INTERVAL_MS = 60 * 60 * 1000;
const STOP_WORDS = new Set(["stop", "stop!", "/stop", "cancel turn"]);

export type { Actor, AnswerOutcome, InboundMessage, MessageOutcome, StopOutcome } from "./types.js";

/** Starts, suspends, resumes and recovers agent turns. Platform- and database-neutral. */
export class Engine {
  settings: EngineSettings;
  private readonly store: SessionStore;
  private readonly adapters: Map<string, PlatformAdapter>;
  private readonly tools: Map<string, Tool>;
  private readonly adminUserIds: Set<string>;
  private readonly clock: () => number;
  private readonly logger: Logger;
  private readonly tasks = new TaskTracker();
  private readonly turns: TurnRunner;
  private readonly cards: CardDesk;
  private sweeper: NodeJS.Timeout | undefined;
  private lastPrune = 0;
  /** Observers for tests and the terminal: every turn's result. */
  onTurnEnd: ((sessionId: string, result: LoopResult) => void) | undefined;

  constructor(deps: EngineDependencies) {
    this.store = deps.store;
    this.adapters = new Map(deps.adapters.map((adapter) => [adapter.platform, adapter]));
    this.tools = new Map((deps.tools ?? []).map((tool) => [tool.definition.name, tool]));
    this.settings = deps.settings ?? DEFAULT_SETTINGS;
    this.adminUserIds = new Set(deps.adminUserIds ?? []);
    this.clock = deps.clock ?? Date.now;
    this.logger = deps.logger;
    this.cards = new CardDesk(
      this.store,
      (session) => this.adapterFor(session),
      () => this.settings,
      this.logger,
    );
    this.turns = new TurnRunner({
      store: this.store,
      model: deps.model,
      tools: this.tools,
      settings: () => this.settings,
      adapterFor: (session) => this.adapterFor(session),
      postCard: (askId, known) => this.cards.post(askId, known),
      logger: this.logger,
      clock: this.clock,
      onTurnEnd: (sessionId, result) => this.onTurnEnd?.(sessionId, result),
    });
  }

  /** A chat message reached the bot: start a session or a turn, queue it, or read it as an answer. */
  async handleMessage(message: InboundMessage): Promise<MessageOutcome> {
    if (!(await this.store.claimEvent(message.eventId, this.clock()))) return "duplicate";
    return this.routeMessage(message, 0);
  }

  private async routeMessage(message: InboundMessage, attempt: number): Promise<MessageOutcome> {
    const isStop = message.addressedToBot && STOP_WORDS.has(message.text.trim().toLowerCase());
    let session = await this.store.findSession(message.conversation);
    if (!session) {
      if (!message.addressedToBot || isStop) return "ignored";
      session = await this.store.createSession({
        id: randomUUID(),
        conversation: message.conversation,
        ownerId: message.author.id,
        now: this.clock(),
      });
    }
    if (isStop) {
      const stop = await this.stop(session.id, message.author);
      if (stop === "not-allowed") await this.cards.notify(session, message.author.id, this.whoMayAnswer(session));
      return stop === "not-allowed" ? "rejected" : "stopping";
    }
    if (session.status === "waiting") {
      const ask = await this.store.pendingAsk(session.id);
      if (ask) return this.answerFromMessage(session, ask, message);
    }
    const mayStartTurn = message.addressedToBot || message.author.id === session.ownerId;
    if (!mayStartTurn) return "ignored";
    const label = message.author.name ? `${message.author.name} (${message.author.id})` : message.author.id;
    const state = await this.store.startTurnOrQueue(session.id, userText(label, message.text), this.clock());
    if (state === "started") {
      this.track(() => this.turns.run(session.id));
      return "started";
    }
    if (state === "queued") return "queued";
    // The session started waiting between our read and our write: read it again as an answer.
    return attempt < 2 ? this.routeMessage(message, attempt + 1) : "ignored";
  }

  private async answerFromMessage(session: Session, ask: Ask, message: InboundMessage): Promise<MessageOutcome> {
    const outcome = await this.answer(ask.id, message.author, answerFromText(ask.spec, message.text));
    if (outcome.kind === "accepted") return "answered";
    if (outcome.kind === "not-allowed" || outcome.kind === "invalid") await this.cards.notify(session, message.author.id, outcome.message);
    return "rejected";
  }

  /** A person answered an ask (tap, modal, reply): authorize, validate, claim once, settle, resume. */
  async answer(askId: string, actor: Actor, input: AnswerInput): Promise<AnswerOutcome> {
    const found = await this.loadPending(askId);
    if ("kind" in found) return found;
    const { ask, session } = found;
    if (!this.mayAnswer(session, actor)) return { kind: "not-allowed", message: this.whoMayAnswer(session) };
    const check = checkAnswer(ask.spec, input);
    if (!check.ok) return { kind: "invalid", message: check.message, ...(check.fieldErrors ? { fieldErrors: check.fieldErrors } : {}) };
    const masked = maskAnswer(ask.spec, check.value);
    return this.resolve(ask, session, {
      status: "answered",
      result: answeredResult(check.value, check.other),
      storedResult: answeredResult(masked, check.other),
      answer: { value: masked, ...(check.other ? { other: true as const } : {}) },
      actor,
    });
  }

  /** Cancel tapped, or an admin cancelled: the model reads `{ok:false, cancelled:true}` and goes on. */
  async cancel(askId: string, actor: Actor): Promise<AnswerOutcome> {
    const found = await this.loadPending(askId);
    if ("kind" in found) return found;
    if (!this.mayAnswer(found.session, actor)) return { kind: "not-allowed", message: this.whoMayAnswer(found.session) };
    const result: AskResult = { ok: false, cancelled: true };
    return this.resolve(found.ask, found.session, { status: "cancelled", result, storedResult: result, answer: null, actor });
  }

  /** Stop: end the turn. A pending ask is cancelled; a running loop stops at its next iteration. */
  async stop(sessionId: string, actor: Actor): Promise<StopOutcome> {
    const session = await this.store.getSession(sessionId);
    if (!session) return "not-running";
    if (!this.mayAnswer(session, actor)) return "not-allowed";
    if (session.status === "running") {
      await this.store.requestStop(sessionId);
      return "stopping";
    }
    const ask = session.status === "waiting" ? await this.store.pendingAsk(sessionId) : undefined;
    if (!ask) return "not-running";
    const result: AskResult = { ok: false, cancelled: true };
    const outcome = await this.resolve(ask, session, {
      status: "cancelled",
      result,
      storedResult: result,
      answer: null,
      actor,
      stop: true,
    });
    return outcome.kind === "accepted" ? "stopped" : "not-running";
  }

  private async loadPending(askId: string): Promise<{ ask: Ask; session: Session } | AnswerOutcome> {
    const found = await this.store.getAskWithSession(askId);
    if (!found) return { kind: "unknown-ask" };
    if (found.ask.status !== "pending") return { kind: "already-ended", status: found.ask.status };
    return found;
  }

  private async resolve(
    ask: Ask,
    session: Session,
    params: {
      status: Exclude<AskStatus, "pending">;
      result: AskResult;
      storedResult: AskResult;
      answer: Ask["answer"];
      actor: Actor | null;
      stop?: boolean;
    },
  ): Promise<AnswerOutcome> {
    const resultMessage: ChatMessage = {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: ask.toolUseId, content: resultText(params.storedResult) }, ...ask.siblingResults],
    };
    const won = await this.store.resolveAsk(ask.id, {
      status: params.status,
      answer: params.answer,
      answeredBy: params.actor?.id ?? null,
      resultMessage,
      sessionStatus: params.stop ? "idle" : "running",
      ...(params.stop ? { outcome: "cancelled" as TurnOutcome } : {}),
      audit: {
        actor: params.actor?.id ?? "system",
        action: params.stop ? "ask-stop" : `ask-${params.status}`,
        target: ask.id,
        outcome: params.stop ? "stopped" : params.status,
        at: this.clock(),
      },
      now: this.clock(),
    });
    if (!won) {
      const current = await this.store.getAsk(ask.id);
      return { kind: "already-ended", status: current?.status ?? params.status };
    }
    const byAdmin = params.actor !== null && params.actor.id !== session.ownerId && this.isAdmin(params.actor);
    const settlement: Settlement = {
      status: params.status,
      ...(params.answer ? { answerText: describeAnswer(ask.spec, params.answer.value, params.answer.other) } : {}),
      ...(params.actor ? { by: params.actor.id } : {}),
      ...(byAdmin ? { byAdmin } : {}),
      ...(params.stop ? { stopped: true } : {}),
    };
    // The real secret lives only in this in-memory message; the store has the masked one.
    const secret =
      hasSecret(ask.spec) && params.status === "answered" ? { toolUseId: ask.toolUseId, content: resultText(params.result) } : undefined;
    this.track(async () => {
      await this.cards.settle(won, session, settlement);
      if (params.stop) await this.adapterFor(session).postMessage(session.conversation, `⏹ Stopped by <@${params.actor?.id ?? "?"}>.`);
      else await this.turns.run(session.id, secret);
    });
    return { kind: "accepted" };
  }

  /** Ends asks whose deadline passed with `{ok:false, timeout:true}`, and re-posts cards that never went out. */
  async sweep(): Promise<number> {
    const now = this.clock();
    const expired = await this.store.listExpiredAsks(now, 100);
    let ended = 0;
    for (const ask of expired) {
      const session = await this.store.getSession(ask.sessionId);
      if (!session) continue;
      const result: AskResult = { ok: false, timeout: true };
      const outcome = await this.resolve(ask, session, { status: "expired", result, storedResult: result, answer: null, actor: null });
      if (outcome.kind === "accepted") ended++;
    }
    for (const ask of await this.store.listUnpostedAsks()) {
      if (ask.createdAt < now - UNPOSTED_GRACE_MS) this.track(() => this.cards.post(ask.id));
    }
    for (const sessionId of this.turns.takeStalled()) this.track(() => this.turns.run(sessionId));
    if (now - this.lastPrune >= EVENT_PRUNE_INTERVAL_MS) {
      this.lastPrune = now;
      await this.store.pruneEvents(now - EVENT_RETENTION_MS);
    }
    return ended;
  }

  /** On start: post cards that never went out, time out what expired, re-run turns a crash interrupted. */
  async recover(): Promise<void> {
    for (const ask of await this.store.listUnpostedAsks()) this.track(() => this.cards.post(ask.id));
    await this.sweep();
    for (const session of await this.store.listSessionsByStatus("running")) {
      const attempts = await this.store.countRecovery(session.id);
      if (attempts <= MAX_RECOVERY_ATTEMPTS) {
        this.track(() => this.turns.run(session.id));
        continue;
      }
      const error = `the turn was interrupted ${attempts} times and was given up`;
      await this.store.commitStep(session.id, { messages: [], usage: ZERO, end: { outcome: "failed", error }, now: this.clock() });
      await this.adapterFor(session).postMessage(session.conversation, `⚠️ ${capitalize(error)}. Write again to start over.`);
    }
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

  mayAnswer(session: Session, actor: Actor): boolean {
    return this.settings.answerPolicy === "thread" || actor.id === session.ownerId || this.isAdmin(actor);
  }

  isAdmin(actor: Actor): boolean {
    return actor.isAdmin === true || this.adminUserIds.has(actor.id);
  }

  cardView(ask: Ask, session: Session): CardView {
    return this.cards.view(ask, session);
  }

  async getAsk(askId: string): Promise<{ ask: Ask; session: Session } | undefined> {
    return this.store.getAskWithSession(askId);
  }

  /** The ask a conversation is waiting on, if any. */
  async pendingAsk(conversation: ConversationRef): Promise<{ ask: Ask; session: Session } | undefined> {
    const session = await this.store.findSession(conversation);
    const ask = session?.status === "waiting" ? await this.store.pendingAsk(session.id) : undefined;
    return session && ask ? { ask, session } : undefined;
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
    await this.tasks.idle();
  }

  /** Resolves when every background turn, post and settle has finished. */
  idle(): Promise<void> {
    return this.tasks.idle();
  }

  private whoMayAnswer(session: Session): string {
    return `Only <@${session.ownerId}> or an admin can answer or stop this.`;
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

const ZERO = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
