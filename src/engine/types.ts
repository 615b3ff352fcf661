import type { AskStatus, ConversationRef } from "../ports/session-store.js";

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
}

export type MessageOutcome = "duplicate" | "ignored" | "started" | "queued" | "answered" | "rejected" | "stopping";

export type AnswerOutcome =
  | { kind: "accepted" }
  | { kind: "invalid"; message: string; fieldErrors?: Record<string, string> }
  | { kind: "not-allowed"; message: string }
  | { kind: "already-ended"; status: AskStatus }
  | { kind: "unknown-ask" };

export type StopOutcome = "stopped" | "stopping" | "not-running" | "not-allowed";
