import type { AnswerInput } from "../ask/answer.js";
import type { AskId, Platform, SessionId } from "./ids.js";
import type { CardView, PlatformAdapter } from "./platform-adapter.js";
import type { RichText } from "./rich-text.js";
import type { AskStatus, ConversationRef } from "./session-store.js";

/** Someone acting on the bot; `isAdmin` is decided by the adapter from the platform, never by the model. */
export interface Actor {
  id: string;
  name?: string;
  isAdmin?: boolean;
}

export interface InboundMessage {
  /** The platform's id for this delivery; redeliveries carry the same one. */
  eventId: string;
  conversation: ConversationRef;
  author: Actor;
  text: string;
  /** A mention of the bot, a DM, or a reply to the bot's own message. */
  addressedToBot: boolean;
  /**
   * A top-level message in a one-to-one DM whose questions go into threads (Slack): from someone who may answer,
   * it answers the question pending in that DM, as people there naturally reply below the card, not in its thread.
   */
  directTopLevel?: boolean;
}

export type MessageOutcome = "duplicate" | "ignored" | "started" | "queued" | "answered" | "rejected" | "stopping";

export type AnswerOutcome =
  | { kind: "accepted" }
  | { kind: "invalid"; message: string; fieldErrors?: Record<string, string> | undefined }
  | { kind: "not-allowed"; notice: RichText }
  | { kind: "already-ended"; status: AskStatus }
  | { kind: "unknown-ask" };

export type StopOutcome = "stopped" | "stopping" | "not-running" | "not-allowed";

/** May this person open the ask's form? Checked before a modal is drawn, so nobody fills one in for nothing. */
export type OpenAnswer = { ok: true; card: CardView } | { ok: false; outcome: Exclude<AnswerOutcome, { kind: "accepted" | "invalid" }> };

/**
 * The inbound port: everything an adapter may ask of the core. Adapters parse a platform payload into
 * one of these calls and render what comes back; the core decides.
 */
export interface Conversation {
  /** A chat message reached the bot: start a session or a turn, queue it, read it as an answer, or stop. */
  handleMessage(message: InboundMessage): Promise<MessageOutcome>;
  /** A person answered an ask (tap, form, reply): authorize, validate, claim once, settle, resume. */
  answer(askId: AskId, actor: Actor, input: AnswerInput): Promise<AnswerOutcome>;
  /** Cancel tapped: the model reads `{ok:false, cancelled:true}` and goes on. */
  cancel(askId: AskId, actor: Actor): Promise<AnswerOutcome>;
  /** Stop: end the session's turn; a pending ask is cancelled, a running loop stops at its next step. */
  stop(sessionId: SessionId, actor: Actor): Promise<StopOutcome>;
  /** Whether this person may open the ask's form, with the card to draw it from. */
  openAnswer(askId: AskId, actor: Actor): Promise<OpenAnswer>;
  /**
   * A platform's recently active conversations, and how far back to look in them: where a start looks for messages
   * it missed while it was down. Messages older than `since` must not be fed again (their event ids may be gone).
   */
  recentConversations(platform: Platform): Promise<{ since: number; conversations: ConversationRef[] }>;
  /** The card a conversation is waiting on, if any (the terminal redraws it on start). */
  pendingCard(conversation: ConversationRef): Promise<CardView | undefined>;
  /** Resolves when every background turn, post and settle has finished. */
  idle(): Promise<void>;
}

export interface AdminRequest {
  text: string;
  actor: Actor;
  conversation: ConversationRef | null;
}

/** A reply to an admin command; a refusal is worded by the adapter, which knows what makes an admin there. */
export type AdminReply = { kind: "reply"; text: RichText } | { kind: "refused" };

/** Runs one `/parley` command line; authorization and the audit trail are the core's. */
export type AdminHandler = (request: AdminRequest) => Promise<AdminReply>;

/** A platform adapter that also owns inbound traffic: it starts once the core exists. */
export interface ServingAdapter extends PlatformAdapter {
  start(conversation: Conversation, admin: AdminHandler): Promise<void>;
  stop(): Promise<void>;
  /** Connected to the platform now (started, and its gateway or socket up): what `/readyz` reports. */
  connected(): boolean;
}
