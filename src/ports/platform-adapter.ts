import type { AskSpec } from "../ask/spec.js";
import type { AskId, Platform, SessionId } from "./ids.js";
import type { RichText } from "./rich-text.js";
import type { AskStatus, ConversationRef } from "./session-store.js";

/** Everything a renderer needs to draw one ask as a card. */
export interface CardView {
  askId: AskId;
  sessionId: SessionId;
  conversation: ConversationRef;
  spec: AskSpec;
  /** The people who may answer, as platform user ids; empty with `anyoneInThread`. */
  answerers: string[];
  anyoneInThread: boolean;
  deadline: number;
  cardRef: string | null;
  /** The card offers Stop, which ends the turn waiting on it: not on an API ask, which has no turn. */
  offersStop: boolean;
}

/** How an ask ended, ready to show in one line. Secrets are already masked. */
export interface Settlement {
  status: Exclude<AskStatus, "pending">;
  /** The answer as text, masked; absent for cancel and timeout. */
  answerText?: string | undefined;
  by?: string | undefined;
  byAdmin?: boolean;
  stopped?: boolean;
}

/**
 * A turn's status line while a step runs. It is the thread's newest message, and what the turn says next (a card,
 * the answer) takes its place: edited into it, so no stale "Thinking…" stays behind and a slow step costs one call.
 */
export interface ProgressView {
  /** Stable for one turn, so the adapter edits one status message instead of posting many. */
  turnKey: string;
  sessionId: SessionId;
  conversation: ConversationRef;
  text: RichText;
  /** The turn is over: remove the Stop button. With nothing shown yet for this turn, nothing needs showing. */
  done: boolean;
}

export interface PostCardOptions {
  /**
   * An earlier attempt may have posted this card without its reference being stored (the process died, or the
   * platform's answer was lost): the adapter looks for it first and adopts it rather than post a second card.
   */
  mayExist?: boolean;
  /** The turn (its key) whose status message, if one shows, becomes this card instead of a message of its own. */
  inPlaceOf?: string;
}

/** How a turn's final answer is posted. */
export interface ReplyOptions {
  /** The turn's key: the adapter marks the message with it (Slack metadata, a Discord nonce). */
  replyKey?: string;
  /** A re-post after a crash: look for a copy that went out before posting again. */
  mayExist?: boolean;
  /** With `mayExist`, when the turn wrote the answer: a copy from before then is an earlier answer, not this one. */
  writtenAt?: number;
  /** The turn (its key) whose status message, if one shows, becomes the answer's first part. */
  inPlaceOf?: string;
}

/** Names a turn's status message and final answer: the same across the turn's suspends and resumes, new each turn. */
export function turnKeyOf(session: { id: string; turnCount: number }): string {
  return `${session.id}:${session.turnCount}`;
}

/** Where an ask from the API goes: a channel, and a thread in it or a new one that starts with `opener`. */
export interface AskPlace {
  channel: string;
  thread?: string | undefined;
  opener: RichText;
  /** Plain words naming the question, for a platform that titles threads (Discord). */
  title: string;
}

/** A chat platform: draws cards and messages. Inbound traffic is the adapter's own business. */
export interface PlatformAdapter {
  readonly platform: Platform;
  /**
   * Showing progress costs nothing here (a terminal): every status shows at once. Otherwise a turn's first status
   * waits an interval, so a step that ends within it (most resumes) costs no "Thinking…" call.
   */
  readonly freeProgress?: boolean;
  /** Posts a card (or adopts the one an earlier attempt posted) and returns the reference later used to settle it. */
  postCard(card: CardView, options?: PostCardOptions): Promise<string>;
  /** Replaces the card's controls with one line: the outcome and who answered. */
  settleCard(card: CardView, settlement: Settlement): Promise<void>;
  /** Posts the model's text, written in Markdown (the adapter converts and splits it). */
  postMessage(conversation: ConversationRef, markdown: string, options?: ReplyOptions): Promise<void>;
  /** Posts the core's own notice to the thread (stopped, failed, waiting), in the adapter's dialect. */
  postNotice(conversation: ConversationRef, text: RichText): Promise<void>;
  /** Tells one person something only they see, where the platform allows. */
  notifyPrivately(conversation: ConversationRef, userId: string, text: RichText): Promise<void>;
  /** Shows or updates the turn's status message (see ProgressView); calls are already throttled by the engine. */
  showProgress(progress: ProgressView): Promise<void>;
  /**
   * The conversation an ask from the API is posted in: the channel checked, a thread started when none is given.
   * Throws a PlaceError the caller can act on (unknown channel, no access). Absent: the platform takes none.
   */
  placeAsk?(place: AskPlace): Promise<ConversationRef>;
}
