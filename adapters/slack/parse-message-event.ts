import { z } from "zod";
import type { ConversationRef } from "../../src/ports/session-store.js";

/** Plain messages and thread broadcasts are people talking; every other subtype is housekeeping. */
const PERSON_SUBTYPES = new Set([undefined, "thread_broadcast"]);

const messageEventSchema = z.object({
  type: z.enum(["app_mention", "message"]),
  subtype: z.string().optional(),
  user: z.string().optional(),
  bot_id: z.string().optional(),
  text: z.string().optional(),
  channel: z.string(),
  channel_type: z.string().optional(),
  ts: z.string(),
  thread_ts: z.string().optional(),
  team: z.string().optional(),
});

export interface ParsedMessage {
  eventId: string;
  conversation: ConversationRef;
  userId: string;
  text: string;
  addressedToBot: boolean;
  /** A top-level message in a DM: it may answer the question pending in one of the DM's threads. */
  directTopLevel: boolean;
}

export function conversationOf(teamId: string, channel: string, ts: string, threadTs?: string): ConversationRef {
  return { platform: "slack", workspace: teamId, channel, thread: threadTs ?? ts };
}

/**
 * Reads an `app_mention` or `message` event as something a person said, or undefined when it must be ignored.
 * The event id is built from channel and ts, so a mention's `message` twin and Slack's retries collapse into one.
 */
export function parseMessageEvent(
  raw: unknown,
  context: { teamId: string | undefined; botUserId: string | undefined },
): ParsedMessage | undefined {
  const parsed = messageEventSchema.safeParse(raw);
  if (!parsed.success) return undefined;
  const event = parsed.data;
  if (!PERSON_SUBTYPES.has(event.subtype) || event.bot_id !== undefined || !event.user) return undefined;
  if (event.user === context.botUserId) return undefined;
  const teamId = context.teamId ?? event.team;
  if (!teamId) return undefined;
  const rawText = event.text ?? "";
  const stripped = context.botUserId ? withoutBotMentions(rawText, context.botUserId) : { text: rawText, mentioned: false };
  const mentionsBot = stripped.mentioned;
  const isDirect = event.channel_type === "im" || (event.channel_type === undefined && event.channel.startsWith("D"));
  const addressedToBot = event.type === "app_mention" || mentionsBot || isDirect;
  // A top-level channel message that does not mention the bot cannot belong to any session.
  if (!addressedToBot && event.thread_ts === undefined) return undefined;
  const text = stripped.text;
  return {
    eventId: `slack:${event.channel}:${event.ts}`,
    conversation: conversationOf(teamId, event.channel, event.ts, event.thread_ts),
    userId: event.user,
    text: text.replace(/\s+/g, " ").trim(),
    addressedToBot,
    directTopLevel: isDirect && event.thread_ts === undefined,
  };
}

/**
 * The text with every mention of the bot (`<@U123>` or `<@U123|name>`) cut out, and whether there was one. Plain
 * string search: the id comes from Slack at run time, and a pattern built from it could be invalid or too large.
 */
function withoutBotMentions(text: string, botUserId: string): { text: string; mentioned: boolean } {
  const opening = `<@${botUserId}`;
  let rest = text;
  let kept = "";
  let mentioned = false;
  for (let at = rest.indexOf(opening); at !== -1; at = rest.indexOf(opening)) {
    const after = rest.slice(at + opening.length);
    const close = after.indexOf(">");
    // `<@U123>` or `<@U123|label>` only: `<@U1234>` is someone else.
    const isMention = close !== -1 && (close === 0 || after[0] === "|");
    if (!isMention) {
      kept += rest.slice(0, at + opening.length);
      rest = after;
      continue;
    }
    mentioned = true;
    kept += `${rest.slice(0, at)} `;
    rest = after.slice(close + 1);
  }
  return { text: kept + rest, mentioned };
}
