import { createHash } from "node:crypto";

/** Discord caps a message nonce at 25 characters. */
const NONCE_CHARS = 25;

/**
 * The nonce a card is posted with: with `enforce_nonce`, Discord returns the message it already created for that
 * nonce (within a few minutes) instead of a second one. Ask ids are longer than 25 characters, so it is derived:
 * a SHA-256 of the ask id, 150 bits of it in base64url.
 */
export function cardNonce(askId: string): string {
  return createHash("sha256").update(`parley-card:${askId}`).digest("base64url").slice(0, NONCE_CHARS);
}

/** The nonce of one piece of a turn's final answer: a re-post within Discord's window returns the first message. */
export function replyNonce(replyKey: string, piece: number): string {
  return createHash("sha256").update(`parley-reply:${replyKey}:${piece}`).digest("base64url").slice(0, NONCE_CHARS);
}

type Json = Record<string, unknown>;

/** Clocks differ by seconds at most: a message of ours from this long before an answer was written may be it. */
export const ANSWER_CLOCK_MARGIN_MS = 60_000;

/**
 * How many times each text went out in this bot's messages (as `GET /channels/:id/messages` returns them) since
 * `since`, less the clock margin, by when each was posted or last edited. A re-posted answer skips the pieces found:
 * one edited into a status line carries no nonce, and a nonce holds only a few minutes.
 */
export function textsSince(messages: readonly unknown[], botId: string, since: number): Map<string, number> {
  const texts = new Map<string, number>();
  for (const message of messages) {
    if (!isJson(message) || !isJson(message.author) || message.author.id !== botId || typeof message.content !== "string") continue;
    const at = Date.parse(String(message.edited_timestamp ?? message.timestamp));
    if (!(at >= since - ANSWER_CLOCK_MARGIN_MS)) continue;
    texts.set(message.content, (texts.get(message.content) ?? 0) + 1);
  }
  return texts;
}

/**
 * The id of the card for `askId` among a channel's messages (as `GET /channels/:id/messages` returns them),
 * posted by this bot: a message with a component whose custom_id belongs to the ask (see custom-id.ts).
 */
export function findCardMessageId(messages: readonly unknown[], askId: string, botId: string): string | undefined {
  const prefix = `ask:${askId}:`;
  for (const message of messages) {
    if (!isJson(message) || typeof message.id !== "string") continue;
    // Only our own message can be adopted: only it can be edited when the ask settles.
    if (!isJson(message.author) || message.author.id !== botId) continue;
    if (customIds(message.components).some((id) => id.startsWith(prefix))) return message.id;
  }
  return undefined;
}

/** Every custom_id in a component tree (action rows, or layout components holding others). */
function customIds(components: unknown): string[] {
  if (!Array.isArray(components)) return [];
  return components.flatMap((component) => {
    if (!isJson(component)) return [];
    const own = typeof component.custom_id === "string" ? [component.custom_id] : [];
    return [...own, ...customIds(component.components), ...(isJson(component.accessory) ? customIds([component.accessory]) : [])];
  });
}

function isJson(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
