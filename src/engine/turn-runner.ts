import { randomBytes } from "node:crypto";
import type { Logger } from "../logger.js";
import { PromptCacheMemory } from "../loop/cache-ttl.js";
import { type ModelRetryPolicy, TurnInterrupted } from "../loop/call-model.js";
import { type LoopResult, runLoop } from "../loop/run-loop.js";
import { ModelError, StoreError } from "../ports/errors.js";
import type { ChatMessage, ModelClient } from "../ports/model-client.js";
import { type PlatformAdapter, turnKeyOf } from "../ports/platform-adapter.js";
import { code, mention, rich, untrusted } from "../ports/rich-text.js";
import type { Session, SessionStore, TurnLease } from "../ports/session-store.js";
import type { ToolCatalog } from "../tools/tool-catalog.js";
import type { CardDesk } from "./card-desk.js";
import type { ElicitationDesk } from "./elicitation-desk.js";
import { ProgressReporter } from "./progress.js";
import type { EngineSettings, RuntimeSettings } from "./settings.js";
import { LEASE_RENEW_MS, LEASE_TTL_MS, postClaim, takeDisplacing } from "./turn-lease.js";

/** The real value of a password answer, put back only into the in-memory history of the resumed turn. */
export interface SecretResult {
  toolUseId: string;
  content: string;
}

export interface TurnRunnerDependencies {
  store: SessionStore;
  model: ModelClient;
  catalog: ToolCatalog;
  systemPrompt: string;
  settings: RuntimeSettings;
  adapterFor: (session: Session) => PlatformAdapter;
  cards: CardDesk;
  elicitations: ElicitationDesk;
  /** This process as a turn lease holder (see turn-lease.ts). */
  leaseOwner: string;
  logger: Logger;
  clock: () => number;
  modelRetry: ModelRetryPolicy;
  onTurnEnd: (sessionId: string, result: LoopResult) => void;
}

/** How often a running turn looks for a Stop stored by another process. */
export const STOP_POLL_MS = 1000;

/** Runs turns: one at a time per session in this process, and reports each ending in the thread. */
export class TurnRunner {
  private readonly chains = new Map<string, Promise<unknown>>();
  /** The running turn's Stop signal, per session: aborting it cancels a tool call in flight. */
  private readonly stops = new Map<string, AbortController>();
  /** Aborted by close(): turns waiting out a busy model stop waiting and are left for start-up recovery. */
  private readonly closing = new AbortController();
  /** Sessions whose turn hit a storage or internal failure; the sweeper runs them again. */
  private readonly stalled = new Set<string>();
  /** Which sessions' histories are still in the model's prompt cache: each request's cache ttl depends on it. */
  private readonly promptCache = new PromptCacheMemory();
  /** Final answers this process's turns wrote and are posting now (see `isReplying`). */
  private readonly replying = new Set<string>();

  constructor(private readonly deps: TurnRunnerDependencies) {}

  /**
   * Runs the session's turn, then any turn its queued messages started. `leasedAt`: the write that resumed the turn
   * took its lease for this process then (`leaseFor`).
   */
  run(sessionId: string, secret?: SecretResult, leasedAt?: number): Promise<void> {
    const previous = this.chains.get(sessionId) ?? Promise.resolve();
    const next = previous.then(() => this.runGuarded(sessionId, secret, leasedAt));
    this.chains.set(sessionId, next);
    const cleanup = () => {
      if (this.chains.get(sessionId) === next) this.chains.delete(sessionId);
    };
    return next.then(cleanup, cleanup);
  }

  /** Whether this process's turn that wrote the final answer `key` is posting it now. */
  isReplying(key: string): boolean {
    return this.replying.has(key);
  }

  /** Whether this process runs the session's turn now (or has one queued for it). */
  has(sessionId: string): boolean {
    return this.chains.has(sessionId);
  }

  /**
   * Takes (or renews) the lease on the session's turn. A holder that is known dead (its process is gone from this
   * host) is displaced at once; any other holder keeps it until it expires, and runs the turn meanwhile.
   */
  async takeLease(sessionId: string): Promise<Session | undefined> {
    return (await takeDisplacing((request) => this.deps.store.takeTurn(sessionId, request), this.leaseFor(this.deps.clock())))?.session;
  }

  /** A turn lease for this process from `now`: taken by `takeLease`, or by the claim that resumes a turn. */
  leaseFor(now: number): TurnLease {
    return { owner: this.deps.leaseOwner, now, ttlMs: LEASE_TTL_MS };
  }

  /**
   * The session whose turn is to run, under this process's lease: one taken with the claim that resumed it, while
   * fresh (a read, where taking it again would be a write), or one taken now.
   */
  private async leased(sessionId: string, leasedAt: number | undefined): Promise<Session | undefined> {
    if (leasedAt === undefined || this.deps.clock() - leasedAt >= LEASE_RENEW_MS) return this.takeLease(sessionId);
    const session = await this.deps.store.getSession(sessionId);
    return session?.status === "running" ? session : undefined;
  }

  /** Stop, in this process: a tool call in flight is cancelled on its server (the store's flag does the rest). */
  abort(sessionId: string): void {
    this.stops.get(sessionId)?.abort();
  }

  /** Shutdown: a turn waiting out a busy model stops waiting (it stays running; the next start re-runs it). */
  shutdown(): void {
    this.closing.abort();
  }

  /** Another process asked to stop this session: a turn running here stops now, not at the next poll. */
  stopRequestedElsewhere(sessionId: string): void {
    const stop = this.stops.get(sessionId);
    if (!stop) return;
    // The notice is a hint: the stored flag decides, as for the poll.
    this.deps.store.isStopRequested(sessionId).then(
      (requested) => requested && stop.abort(),
      () => {},
    );
  }

  /** Sessions to run again, taken once: the sweeper calls this after a fault (disk full, database locked) clears. */
  takeStalled(): string[] {
    const sessions = [...this.stalled];
    this.stalled.clear();
    return sessions;
  }

  private async runGuarded(sessionId: string, secret?: SecretResult, leasedAt?: number): Promise<void> {
    try {
      await this.runNow(sessionId, secret, leasedAt);
    } catch (error) {
      // Nothing half-written: every step is one transaction, so the turn re-runs from its last committed step.
      const firstTime = !this.stalled.has(sessionId);
      this.stalled.add(sessionId);
      this.deps.logger.error({ sessionId, code: (error as { code?: string }).code, message: (error as Error).message }, "turn-stalled");
      if (firstTime) await this.tellStalled(sessionId, error);
    }
  }

  private async tellStalled(sessionId: string, error: unknown): Promise<void> {
    try {
      const session = await this.deps.store.getSession(sessionId);
      const reason = error instanceof StoreError && error.code === "storage-full" ? "the disk is full" : "its storage is unavailable";
      if (session)
        await this.deps
          .adapterFor(session)
          .postNotice(session.conversation, [
            `⚠️ Parley cannot save this turn right now (${reason}). It will carry on by itself once that is fixed.`,
          ]);
    } catch {
      // The store may be the thing that is down; the log line above already says what happened.
    }
  }

  private async runNow(sessionId: string, secret?: SecretResult, leasedAt?: number): Promise<void> {
    const { store } = this.deps;
    for (let more = true; more; secret = undefined, leasedAt = undefined) {
      // A turn runs in one process at a time: another live process holding its lease runs it. Only a running session
      // has a turn to lease: another runner (or a Stop) may have got here first.
      const session = await this.leased(sessionId, leasedAt);
      if (!session) return;
      const settings = this.deps.settings.get();
      const progress = new ProgressReporter(
        this.deps.adapterFor(session),
        { turnKey: turnKeyOf(session), sessionId: session.id, conversation: session.conversation },
        this.deps.logger,
        this.deps.clock,
      );
      const history = await store.loadMessages(sessionId);
      if (secret) withSecret(history, secret);
      const stop = new AbortController();
      this.stops.set(sessionId, stop);
      // A Stop taken by another process (several on one database) is only a flag in the store: looking at it every
      // second cancels a tool call in flight here within a second, not at the end of the call.
      let ticks = 0;
      const watch = setInterval(() => {
        store.isStopRequested(sessionId).then(
          (requested) => requested && stop.abort(),
          () => {},
        );
        if (++ticks % (LEASE_RENEW_MS / STOP_POLL_MS) === 0) void this.takeLease(sessionId).catch(() => false);
      }, STOP_POLL_MS);
      watch.unref();
      let result: LoopResult;
      try {
        result = await runLoop(
          {
            store,
            model: this.deps.model,
            catalog: this.deps.catalog,
            settings,
            systemPrompt: this.deps.systemPrompt,
            clock: this.deps.clock,
            retry: this.deps.modelRetry,
            newAskId: () => randomBytes(9).toString("base64url"),
            // Tool progress is a server's text: shown as typed, pinging nobody.
            progress: (text, options) => progress.update([untrusted(text)], options),
            signal: stop.signal,
            shutdown: this.closing.signal,
            elicit: (server, request) => this.deps.elicitations.ask(session, server, request),
            promptCache: this.promptCache,
            postClaim: (now) => postClaim(this.deps.leaseOwner, now),
          },
          session,
          history,
        );
        // What the step just wrote is this turn's to post (below, after the status line): this process's sweeper,
        // whose own claim the write holds, must leave it alone until then.
        if (result.outcome === "suspended") this.deps.cards.reserve(result.ask.id);
        if (result.outcome === "completed" && result.text) this.replying.add(result.replyKey);
      } catch (error) {
        // The turn stopped between steps: the lease goes now, not when it expires (the step that ends a turn drops it).
        await store.releaseTurn(sessionId, this.deps.leaseOwner).catch(() => {});
        if (!(error instanceof TurnInterrupted)) throw error;
        this.deps.logger.info({ sessionId }, "turn-interrupted-by-shutdown");
        // The Stop button goes: this process cannot act on it any more; the restarted one posts a new status.
        await progress.finish(rich`Paused: Parley is restarting, and will carry on with this turn`);
        return;
      } finally {
        clearInterval(watch);
        if (this.stops.get(sessionId) === stop) this.stops.delete(sessionId);
      }
      this.deps.logger.info({ sessionId, outcome: result.outcome }, "turn-ended");
      if (result.outcome === "failed") this.logFailure(sessionId, result.error, result.cause);
      more = result.outcome !== "suspended" && result.nextTurn;
      try {
        await this.report(session, settings, result, progress);
      } finally {
        if (result.outcome === "suspended") this.deps.cards.release(result.ask.id);
        if (result.outcome === "completed") this.replying.delete(result.replyKey);
      }
      this.deps.onTurnEnd(sessionId, result);
    }
  }

  /** What an admin needs to fix a failed turn; the provider's words go to the log, never to the thread. */
  private logFailure(sessionId: string, error: string, cause: unknown): void {
    const model = cause instanceof ModelError ? { code: cause.code, status: cause.status, detail: cause.detail } : {};
    const internal = cause instanceof Error && !(cause instanceof ModelError) ? { err: cause } : {};
    this.deps.logger.error({ sessionId, error, ...model, ...internal }, "turn-failed");
  }

  private async report(session: Session, settings: EngineSettings, result: LoopResult, progress: ProgressReporter): Promise<void> {
    const adapter = this.deps.adapterFor(session);
    const notice = (text: ReturnType<typeof rich>) => adapter.postNotice(session.conversation, text);
    switch (result.outcome) {
      case "suspended": {
        // The card takes the status message's place: a slow step costs the card's one call, and nothing stale stays.
        const asked = settings.answerPolicy === "thread" ? rich`Asked a question` : rich`Asked ${mention(session.ownerId)}`;
        const inPlaceOf = await progress.handOver(asked);
        await this.deps.cards.post(result.ask.id, { ask: result.ask, session, ...(inPlaceOf ? { inPlaceOf } : {}) });
        return;
      }
      case "completed": {
        if (!result.text) return progress.finish(rich`Done`);
        const inPlaceOf = await progress.handOver(rich`Done`);
        await adapter.postMessage(session.conversation, result.text, { replyKey: result.replyKey, ...(inPlaceOf ? { inPlaceOf } : {}) });
        await this.deps.store.replyPosted(result.replyKey);
        return;
      }
      case "max-iterations":
        await progress.finish(rich`Stopped`);
        await notice(rich`⚠️ I stopped after ${String(settings.maxIterations)} steps without finishing. Write again to continue.`);
        return;
      case "cancelled":
        await progress.finish(rich`Stopped`);
        await notice(rich`⏹ Stopped.`);
        return;
      case "failed":
        await progress.finish(rich`Failed`);
        await notice(
          rich`⚠️ This turn failed: ${result.error}. Write again to retry, or an admin can run ${code(`/parley retry ${session.id}`)}.`,
        );
        return;
    }
  }
}

function withSecret(history: ChatMessage[], secret: SecretResult): void {
  for (const message of history) {
    for (const block of message.content) {
      if (block.type === "tool_result" && block.tool_use_id === secret.toolUseId) block.content = secret.content;
    }
  }
}
