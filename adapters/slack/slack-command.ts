import type { Actor } from "../../src/engine/engine.js";
import type { ConversationRef } from "../../src/ports/session-store.js";

/**
 * Runs one `/parley` admin command. Slack slash commands carry no thread, so `conversation` is null there.
 * The reply is shown only to the person who typed it.
 */
export type SlackCommandHandler = (command: {
  text: string;
  actor: Actor;
  conversation: ConversationRef | null;
}) => Promise<{ text: string }>;
