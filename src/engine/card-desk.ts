import { describeAnswer } from "../ask/describe.js";
import type { Logger } from "../logger.js";
import type { CardView, PlatformAdapter, Settlement } from "../ports/platform-adapter.js";
import type { RichText } from "../ports/rich-text.js";
import type { Ask, Session, SessionStore } from "../ports/session-store.js";
import type { RuntimeSettings } from "./settings.js";
import { POST_CLAIM_TTL_MS, takeDisplacing } from "./turn-lease.js";

export interface CardDeskDependencies {
  store: SessionStore;
  adapterFor: (session: Session) => PlatformAdapter;
  settings: RuntimeSettings;
  logger: Logger;
  clock: () => number;
  /** This process as the holder of post claims (see turn-lease.ts). */
  owner: string;
}

/** How late past its ask's deadline-to-be a card may go out and keep that deadline (see `postCard`). */
export const LATE_POST_MS = 1000;

/** Posts, settles and describes cards. Platform failures are logged here and never lose an ask. */
export class CardDesk {
  private readonly posting = new Set<string>();

  private readonly store: SessionStore;
  private readonly adapterFor: (session: Session) => PlatformAdapter;
  private readonly settings: RuntimeSettings;
  private readonly logger: Logger;
  private readonly clock: () => number;
  private readonly owner: string;

  constructor(deps: CardDeskDependencies) {
    this.owner = deps.owner;
    this.store = deps.store;
    this.adapterFor = deps.adapterFor;
    this.settings = deps.settings;
    this.logger = deps.logger;
    this.clock = deps.clock;
  }

  view(ask: Ask, session: Session): CardView {
    const external = ask.spec.external;
    const anyone = external ? external.answerers.length === 0 : this.settings.get().answerPolicy === "thread";
    return {
      askId: ask.id,
      sessionId: session.id,
      conversation: session.conversation,
      spec: ask.spec,
      answerers: anyone ? [] : (external?.answerers ?? [session.ownerId]),
      anyoneInThread: anyone,
      deadline: ask.deadline,
      cardRef: ask.cardRef,
      offersStop: !external,
    };
  }

  /**
   * Posts an ask's card and stores its reference; a failure leaves it for the sweeper to post again. `written` is
   * the ask as this process just wrote it, its post claim with it (a turn's suspend), and the turn whose status
   * message the card replaces.
   */
  async post(askId: string, written?: { ask: Ask; session: Session; inPlaceOf?: string }): Promise<void> {
    if (!written) return this.postOnce(askId, undefined, false);
    try {
      await this.postCard(askId, written, false);
    } finally {
      this.posting.delete(askId);
    }
  }

  /**
   * Marks the card of an ask this process just wrote as being posted here, until `post(askId, written)` ends or
   * `release` is called: the sweeper in this process leaves it alone meanwhile (its own claim would not stop it).
   */
  reserve(askId: string): void {
    this.posting.add(askId);
  }

  release(askId: string): void {
    this.posting.delete(askId);
  }

  /**
   * Posts the card of an ask whose reference was never stored (recovery, the sweeper): the card may already be
   * in the thread, so the adapter adopts it instead of posting it twice.
   */
  async repost(askId: string): Promise<void> {
    await this.postOnce(askId, undefined, true);
  }

  private async postOnce(askId: string, known: { ask: Ask; session: Session } | undefined, mayExist: boolean): Promise<void> {
    // One post at a time per ask in this process; the sweeper and the turn may both try.
    if (this.posting.has(askId)) return;
    this.posting.add(askId);
    try {
      await this.postCard(askId, known, mayExist);
    } finally {
      this.posting.delete(askId);
    }
  }

  private async postCard(
    askId: string,
    known: { ask: Ask; session: Session; inPlaceOf?: string } | undefined,
    mayExist: boolean,
  ): Promise<void> {
    try {
      const found = known ?? (await this.store.getAskWithSession(askId));
      if (found?.ask.status !== "pending" || found.ask.cardRef !== null) return;
      // Whoever else may be posting this card this very moment (the turn that wrote it, in another process) holds
      // its claim: wait for them, or for their claim to lapse, rather than post it beside them.
      if (!known && !(await this.claim(askId))) return;
      const { ask, session } = found;
      // A card posted late (after a crash or a platform error) still gets its whole time, as the card says; one posted
      // within a second of its ask keeps the deadline written with it, and the store moves nothing.
      const fullTime = this.clock() + ask.spec.timeoutSeconds * 1000;
      const moved = fullTime - ask.deadline > LATE_POST_MS ? fullTime : undefined;
      const card = { ...this.view(ask, session), deadline: moved ?? ask.deadline };
      const inPlaceOf = known?.inPlaceOf;
      const cardRef = await this.adapterFor(session).postCard(card, {
        ...(mayExist ? { mayExist } : {}),
        ...(inPlaceOf ? { inPlaceOf } : {}),
      });
      const status = await this.store.setCardRef(askId, cardRef, moved);
      // Answered (say, by a thread reply) while the card was on its way: settle it now, nobody else will.
      if (status !== undefined && status !== "pending") {
        const ended = await this.store.getAskWithSession(askId);
        if (ended) await this.settle(ended.ask, ended.session, this.settlementOf(ended.ask, ended.session));
      }
    } catch (error) {
      this.logger.warn({ err: error, askId }, "card-post failed; will retry");
    }
  }

  private async claim(askId: string): Promise<boolean> {
    const lease = { owner: this.owner, now: this.clock(), ttlMs: POST_CLAIM_TTL_MS };
    return (await takeDisplacing((claim) => this.store.claimCardPost(askId, claim), lease)) !== undefined;
  }

  /** `ask` is the ended row as the claim returned it; an ask whose card never went out has nothing to settle. */
  async settle(ask: Ask, session: Session, settlement: Settlement): Promise<void> {
    if (ask.cardRef === null) return;
    try {
      await this.adapterFor(session).settleCard(this.view(ask, session), settlement);
      // Recorded only once the platform took the update: a crash or failure before it leaves the ask for start-up.
      await this.store.recordCardSettled(ask.id, this.clock());
    } catch (error) {
      this.logger.warn({ err: error, askId: ask.id }, "card-settle failed");
    }
  }

  /** The settlement an ended ask shows, rebuilt from its row (for cards settled late, after a crash). */
  settlementOf(ask: Ask, session: Session): Settlement {
    const by = ask.answeredBy;
    return {
      status: ask.status === "pending" ? "cancelled" : ask.status,
      answerText: ask.answer ? describeAnswer(ask.spec, ask.answer.value, ask.answer.other) : undefined,
      by: by ?? undefined,
      // Under the owner policy only the owner and admins may answer, so anyone else who did is an admin.
      ...(by && by !== session.ownerId && this.settings.get().answerPolicy === "owner" ? { byAdmin: true } : {}),
    };
  }

  async notify(session: Session, userId: string, text: RichText): Promise<void> {
    try {
      await this.adapterFor(session).notifyPrivately(session.conversation, userId, text);
    } catch (error) {
      this.logger.warn({ err: error, sessionId: session.id }, "private-notice failed");
    }
  }

  /** Posts the core's own notice in the session's thread; a platform failure is logged, never thrown. */
  async announce(session: Session, text: RichText): Promise<void> {
    try {
      await this.adapterFor(session).postNotice(session.conversation, text);
    } catch (error) {
      this.logger.warn({ err: error, sessionId: session.id }, "notice-post failed");
    }
  }
}
