import type { AskResult } from "../ask/result.js";
import type { Logger } from "../logger.js";
import { givenUpResults } from "../loop/tool-phase.js";
import type { MaintenanceStore, WrittenReply } from "../ports/maintenance-store.js";
import { type ChatMessage, ZERO_USAGE } from "../ports/model-client.js";
import type { PlatformAdapter } from "../ports/platform-adapter.js";
import { rich } from "../ports/rich-text.js";
import type { Session, SessionStore } from "../ports/session-store.js";
import type { AskResolver } from "./ask-resolver.js";
import type { CardDesk } from "./card-desk.js";
import type { ElicitationDesk } from "./elicitation-desk.js";
import { LEASE_TTL_MS, POST_CLAIM_TTL_MS, takeDisplacing } from "./turn-lease.js";
import type { TurnRunner } from "./turn-runner.js";

/** Turns interrupted by a crash are re-run this many times before the session is failed visibly. */
export const MAX_RECOVERY_ATTEMPTS = 2;
/** A card still unposted this long after its ask was written is posted again by the sweeper. */
export const UNPOSTED_GRACE_MS = 10_000;
export const SWEEP_INTERVAL_MS = 5000;
/** Event ids are kept a day: far longer than Slack's retries (minutes) or a Discord RESUME replay. */
export const EVENT_RETENTION_MS = 24 * 60 * 60 * 1000;
const EVENT_PRUNE_INTERVAL_MS = 60 * 60 * 1000;
const EXPIRED_PER_SWEEP = 100;
/**
 * How far back start-up looks for ended asks whose settle was never recorded (a crash between a claim and its
 * card update). Only those are re-settled; the bound stops a card that can never be updated (deleted) from being
 * tried on every start forever.
 */
export const RESETTLE_WINDOW_MS = 24 * 60 * 60 * 1000;
const RESETTLE_LIMIT = 1000;

export interface MaintenanceDependencies {
  store: SessionStore & MaintenanceStore;
  resolver: AskResolver;
  cards: CardDesk;
  turns: TurnRunner;
  elicitations: ElicitationDesk;
  adapterFor: (session: Session) => PlatformAdapter;
  track: (task: () => Promise<void>) => void;
  clock: () => number;
  logger: Logger;
  /** This process as the holder of post claims (see turn-lease.ts). */
  owner: string;
  /** API callbacks still owed (failed, or ended in another process): delivered by each sweep. */
  callbacks?: { deliverDue(): Promise<void> };
}

/** The timeout sweeper and start-up recovery: what makes "nothing lost" hold after crashes and faults. */
export class Maintenance {
  private lastPrune = 0;
  private readonly postingReplies = new Set<string>();

  constructor(private readonly deps: MaintenanceDependencies) {}

  /** `takeOver: false` from recovery, which takes the leases of the turns left running itself, counting attempts. */
  async sweep(options: { takeOver?: boolean } = {}): Promise<number> {
    const { store, track } = this.deps;
    const now = this.deps.clock();
    let ended = 0;
    for (const ask of await store.listExpiredAsks(now, EXPIRED_PER_SWEEP)) {
      const session = await store.getSession(ask.sessionId);
      if (!session) continue;
      const result: AskResult = { ok: false, timeout: true };
      // The same claim as a tap: a tap racing the sweeper has exactly one winner.
      const outcome = await this.deps.resolver.resolve(ask, session, {
        status: "expired",
        result,
        storedResult: result,
        answer: null,
        actor: null,
      });
      if (outcome.kind === "accepted") ended++;
    }
    for (const ask of await store.listUnpostedAsks()) {
      if (ask.createdAt < now - UNPOSTED_GRACE_MS) track(() => this.deps.cards.repost(ask.id));
    }
    const { turns, callbacks } = this.deps;
    if (callbacks) track(() => callbacks.deliverDue());
    for (const sessionId of turns.takeStalled()) track(() => turns.run(sessionId));
    // An answer the turn could not post (a platform outage): posted again once the turn has had its chance.
    track(() => this.postPendingReplies(now - UNPOSTED_GRACE_MS));
    // A turn whose process died mid-run (another process, on one database): taken over once its lease has expired.
    if (options.takeOver !== false) {
      for (const session of await store.listSessionsByStatus("running")) {
        if (turns.has(session.id) || now - session.updatedAt < LEASE_TTL_MS) continue;
        track(() => turns.run(session.id));
      }
    }
    if (now - this.lastPrune >= EVENT_PRUNE_INTERVAL_MS) {
      this.lastPrune = now;
      await store.pruneEvents(now - EVENT_RETENTION_MS);
    }
    return ended;
  }

  /**
   * Final answers a crash or a platform error kept from the thread (written before `before`): posted now, unless
   * the platform shows one went out after all.
   */
  private async postPendingReplies(before: number): Promise<void> {
    const { store } = this.deps;
    for (const reply of await store.listPendingReplies(before, RESETTLE_LIMIT)) {
      // One post at a time per answer in this process: the sweeper comes back every few seconds, and the turn that
      // wrote it may still be posting it (its own claim would not stop this process).
      if (this.postingReplies.has(reply.key) || this.deps.turns.isReplying(reply.key)) continue;
      this.postingReplies.add(reply.key);
      await this.postReply(reply).finally(() => this.postingReplies.delete(reply.key));
    }
  }

  private async postReply(reply: WrittenReply): Promise<void> {
    const { store, owner } = this.deps;
    try {
      const lease = { owner, now: this.deps.clock(), ttlMs: POST_CLAIM_TTL_MS };
      // The turn that wrote it (another live process) may be posting it now: its claim says so.
      if (!(await takeDisplacing((claim) => store.claimReplyPost(reply.key, claim), lease))) return;
      const session = await store.getSession(reply.sessionId);
      if (session)
        await this.deps.adapterFor(session).postMessage(session.conversation, reply.text, {
          replyKey: reply.key,
          mayExist: true,
          writtenAt: reply.writtenAt,
        });
      await store.replyPosted(reply.key);
    } catch (error) {
      // Kept in the outbox: the sweeper tries again.
      this.deps.logger.warn({ err: error, sessionId: reply.sessionId }, "pending-reply-post failed");
    }
  }

  async recover(): Promise<void> {
    const { store, track, turns } = this.deps;
    // Only the turns this start takes the lease of: a turn another live process runs (several processes on one
    // database) is left alone, and its open forms with it.
    const running: Session[] = [];
    for (const session of await store.listSessionsByStatus("running")) if (await turns.takeLease(session.id)) running.push(session);
    for (const session of running) await this.deps.elicitations.abandonOrphans(session);
    // What a live process (a fleet) is posting this very moment is left to it by its post claim; the sweeper comes
    // back for anything whose claimant dies.
    await this.postPendingReplies(Number.MAX_SAFE_INTEGER);
    // Post first, then sweep: a question nobody saw must not time out (the sweep skips unposted asks too).
    // Each may have been posted by the process that died before storing its reference: adopted, not posted twice.
    await Promise.all((await store.listUnpostedAsks()).map((ask) => this.deps.cards.repost(ask.id)));
    // A crash between a claim and its card update leaves live buttons: settle the endings whose settle is not recorded.
    for (const ask of await store.listUnsettledAsks(this.deps.clock() - RESETTLE_WINDOW_MS, RESETTLE_LIMIT)) {
      const session = await store.getSession(ask.sessionId);
      if (session) track(() => this.deps.cards.settle(ask, session, this.deps.cards.settlementOf(ask, session)));
    }
    await this.sweep({ takeOver: false });
    for (const session of running) {
      const attempts = await store.countRecovery(session.id);
      if (attempts <= MAX_RECOVERY_ATTEMPTS) {
        track(() => turns.run(session.id));
        continue;
      }
      const error = `the turn was interrupted ${attempts} times and was given up`;
      const open = await givenUpResults(store, session.id, await store.loadMessages(session.id));
      const messages: ChatMessage[] = open.length > 0 ? [{ role: "user", content: open }] : [];
      // Under the lease, which the ending step drops: no other process takes the turn over while its open calls are
      // being answered.
      await store.commitStep(session.id, { messages, usage: ZERO_USAGE, end: { outcome: "failed", error }, now: this.deps.clock() });
      await this.deps
        .adapterFor(session)
        .postNotice(
          session.conversation,
          rich`⚠️ The turn was interrupted ${String(attempts)} times and was given up. Write again to start over.`,
        );
    }
  }
}
