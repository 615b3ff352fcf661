import { randomUUID } from "node:crypto";
import { type AnswerInput, answerFromText } from "../ask/answer.js";
import { userText } from "../loop/history.js";
import type { Actor, AnswerOutcome, InboundMessage, MessageOutcome, StopOutcome } from "../ports/conversation.js";
import type { Ask, Session, SessionStore } from "../ports/session-store.js";
import type { AnswerRules } from "./answer-rules.js";
import type { CardDesk } from "./card-desk.js";

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

/** Follows the "not a valid answer" notice for a top-level DM message, which the person may have meant as a new request. */
export const DIRECT_ANSWER_HINT =
  "Your message was read as the answer to the question waiting in this DM: answer it or press Cancel on its card, then ask again.";

export interface MessageRouterDependencies {
  store: SessionStore;
  cards: CardDesk;
  rules: AnswerRules;
  clock: () => number;
  answer: (askId: string, actor: Actor, input: AnswerInput) => Promise<AnswerOutcome>;
  stop: (sessionId: string, actor: Actor) => Promise<StopOutcome>;
  /** Runs a turn that was just started, in the background. */
  runTurn: (sessionId: string) => void;
}

/** A chat message's way in: a new session or turn, a queued message, an answer to the pending question, or Stop. */
export class MessageRouter {
  constructor(private readonly deps: MessageRouterDependencies) {}

  async handle(message: InboundMessage): Promise<MessageOutcome> {
    // A cheap early exit; the claim itself is made atomically with whatever the message changes.
    if (await this.deps.store.hasEvent(message.eventId)) return "duplicate";
    return this.route(message, 0);
  }

  private async route(message: InboundMessage, attempt: number): Promise<MessageOutcome> {
    const { store, clock } = this.deps;
    const isStop = message.addressedToBot && isStopRequest(message.text);
    let session = await store.findSession(message.conversation);
    if (!session && message.directTopLevel && !isStop) {
      const answered = await this.answerInDirect(message);
      if (answered) return answered;
    }
    if (!session) {
      if (!message.addressedToBot || isStop) return "ignored";
      session = await store.createSession({
        id: randomUUID(),
        conversation: message.conversation,
        ownerId: message.author.id,
        now: clock(),
      });
    }
    const claim = () => store.claimEvent(message.eventId, clock());
    if (isStop) {
      if (!(await claim())) return "duplicate";
      const stop = await this.deps.stop(session.id, message.author);
      if (stop === "not-allowed") {
        const ask = session.status === "waiting" ? await store.pendingAsk(session.id) : undefined;
        await this.deps.cards.notify(session, message.author.id, this.deps.rules.whoMayAnswer(session, "answer or stop", ask));
      }
      return stop === "not-allowed" ? "rejected" : "stopping";
    }
    if (session.status === "waiting") {
      const ask = await store.pendingAsk(session.id);
      if (ask) return (await claim()) ? this.answerFromMessage(session, ask, message) : "duplicate";
    }
    const mayStartTurn = message.addressedToBot || message.author.id === session.ownerId;
    if (!mayStartTurn) return "ignored";
    const label = message.author.name ? `${message.author.name} (${message.author.id})` : message.author.id;
    // The event is claimed in the same transaction that stores the message: a crash cannot split the two.
    const state = await store.startTurnOrQueue(session.id, userText(label, message.text), clock(), message.eventId);
    if (state === "duplicate") return "duplicate";
    if (state === "started") {
      this.deps.runTurn(session.id);
      return "started";
    }
    if (state === "queued") return "queued";
    // The session started waiting between our read and our write: read it again as an answer.
    return attempt < 2 ? this.route(message, attempt + 1) : "ignored";
  }

  /**
   * A top-level DM message answers the question pending in one of the DM's threads when its author may answer it.
   * Rule: in a one-to-one DM with a question waiting, a top-level message from someone who may answer is its answer,
   * valid or not; an invalid one (a new request included) gets the usual notice and starts nothing, so the question
   * is never asked twice; a new request waits until the question is answered, cancelled or expired.
   */
  private async answerInDirect(message: InboundMessage): Promise<MessageOutcome | undefined> {
    const { store } = this.deps;
    const { platform, workspace, channel } = message.conversation;
    const waiting = await store.waitingSessionIn({ platform, workspace, channel });
    const ask = waiting ? await store.pendingAsk(waiting.id) : undefined;
    if (!waiting || !ask || !this.deps.rules.mayAnswer(waiting, message.author, ask)) return undefined;
    if (!(await store.claimEvent(message.eventId, this.deps.clock()))) return "duplicate";
    return this.answerFromMessage(waiting, ask, message, DIRECT_ANSWER_HINT);
  }

  /** `invalidHint` follows the "not a valid answer" notice, for a message that may not have been meant as an answer. */
  private async answerFromMessage(session: Session, ask: Ask, message: InboundMessage, invalidHint?: string): Promise<MessageOutcome> {
    const outcome = await this.deps.answer(ask.id, message.author, answerFromText(ask.spec, message.text));
    if (outcome.kind === "accepted") return "answered";
    if (outcome.kind === "not-allowed") await this.deps.cards.notify(session, message.author.id, outcome.notice);
    if (outcome.kind === "invalid") {
      await this.deps.cards.notify(session, message.author.id, [invalidHint ? `${outcome.message} ${invalidHint}` : outcome.message]);
    }
    return "rejected";
  }
}
