import { z } from "zod";

/** The message metadata `event_type` every card carries, so a card posted by a process that died can be found. */
export const CARD_EVENT_TYPE = "parley_ask";

/** The metadata posted with a card: it names the ask, which the card's blocks only carry inside action ids. */
export function cardMetadata(askId: string): { event_type: string; event_payload: { ask_id: string } } {
  return { event_type: CARD_EVENT_TYPE, event_payload: { ask_id: askId } };
}

const threadMessageSchema = z.object({
  ts: z.string().min(1),
  bot_id: z.string().optional(),
  metadata: z.object({ event_type: z.string(), event_payload: z.record(z.string(), z.unknown()).optional() }).optional(),
});

/** The metadata `event_type` of a turn's final answer, so a re-post after a crash can see it already went out. */
export const REPLY_EVENT_TYPE = "parley_reply";

export function replyMetadata(replyKey: string): { event_type: string; event_payload: { reply_key: string } } {
  return { event_type: REPLY_EVENT_TYPE, event_payload: { reply_key: replyKey } };
}

/** The metadata `event_type` of an API ask's opener (the top-level message its thread hangs from). */
export const OPENER_EVENT_TYPE = "parley_opener";

export function openerMetadata(openerId: string): { event_type: string; event_payload: { opener_id: string } } {
  return { event_type: OPENER_EVENT_TYPE, event_payload: { opener_id: openerId } };
}

/** The ts of the opener `openerId` among a channel's messages (`conversations.history`), posted by this bot. */
export function findOpenerTs(messages: readonly unknown[], openerId: string, botId: string): string | undefined {
  return findMarked(messages, botId, OPENER_EVENT_TYPE, "opener_id", openerId);
}

/**
 * The ts of the card for `askId` among a thread's messages (as `conversations.replies` returns them with
 * `include_all_metadata`), posted by this bot; anything else, or anything unreadable, is not it.
 */
export function findCardTs(messages: readonly unknown[], askId: string, botId: string): string | undefined {
  return findMarked(messages, botId, CARD_EVENT_TYPE, "ask_id", askId);
}

/** The ts of a message of the turn's final answer among a thread's messages, posted by this bot. */
export function findReplyTs(messages: readonly unknown[], replyKey: string, botId: string): string | undefined {
  return findMarked(messages, botId, REPLY_EVENT_TYPE, "reply_key", replyKey);
}

function findMarked(messages: readonly unknown[], botId: string, eventType: string, field: string, value: string): string | undefined {
  for (const message of messages) {
    const parsed = threadMessageSchema.safeParse(message);
    if (!parsed.success) continue;
    const { ts, bot_id: author, metadata } = parsed.data;
    // Only our own message counts: only it can be updated (a card) or stands for our answer.
    if (author !== botId || metadata?.event_type !== eventType) continue;
    if (metadata.event_payload?.[field] === value) return ts;
  }
  return undefined;
}
