import type { InboundMessage } from "../../src/ports/conversation.js";
import type { Platform } from "../../src/ports/ids.js";
import { DISCORD_LIMITS, truncate } from "./discord-limits.js";

export const PLATFORM: Platform = "discord";
export const DM_WORKSPACE = "dm";

/** The facts about one gateway message that decide where it goes, read off discord.js's Message. */
export interface MessageFacts {
  id: string;
  channelId: string;
  guildId: string | null;
  channelKind: "dm" | "thread" | "text" | "other";
  /** A thread's parent channel. */
  parentId: string | null;
  /** `isAdmin`: the member holds Manage Server through their roles, as discord.js computes it from the guild cache. */
  author: { id: string; name?: string; isBot: boolean; isAdmin?: boolean };
  content: string;
  mentionsBot: boolean;
  /** A Discord reply to one of the bot's own messages. */
  repliesToBot: boolean;
}

export type MessageRoute =
  | { route: "ignore" }
  /** A mention in a plain channel: start a thread from the message, then hand it to the engine there. */
  | { route: "start-thread"; threadName: string; message: InboundMessage }
  | { route: "engine"; message: InboundMessage };

/** Decides what a gateway message means for the bot; pure, so every branch is unit-tested. */
export function routeMessage(facts: MessageFacts, botId: string): MessageRoute {
  if (facts.author.isBot || facts.author.id === botId) return { route: "ignore" };
  const text = stripMention(facts.content, botId);
  const addressedToBot = facts.channelKind === "dm" || facts.mentionsBot || facts.repliesToBot;
  // Without the MessageContent intent an ordinary message arrives with empty content: there is nothing to read.
  if (text === "" && !addressedToBot) return { route: "ignore" };
  const base = {
    eventId: `discord:message:${facts.id}`,
    author: { id: facts.author.id, ...(facts.author.name ? { name: facts.author.name } : {}), isAdmin: facts.author.isAdmin === true },
    text,
    addressedToBot,
  };
  if (facts.channelKind === "dm") {
    return {
      route: "engine",
      message: {
        ...base,
        conversation: { platform: PLATFORM, workspace: DM_WORKSPACE, channel: facts.channelId, thread: facts.channelId },
      },
    };
  }
  if (facts.guildId === null) return { route: "ignore" };
  if (facts.channelKind === "thread" && facts.parentId !== null) {
    const conversation = { platform: PLATFORM, workspace: facts.guildId, channel: facts.parentId, thread: facts.channelId };
    return { route: "engine", message: { ...base, conversation } };
  }
  if (facts.channelKind !== "text" || !facts.mentionsBot) return { route: "ignore" };
  // Discord gives a thread started from a message that message's id, so the conversation is known before it exists.
  const conversation = { platform: PLATFORM, workspace: facts.guildId, channel: facts.channelId, thread: facts.id };
  return { route: "start-thread", threadName: threadName(text, facts.author.name), message: { ...base, conversation } };
}

export function stripMention(content: string, botId: string): string {
  return content.replaceAll(`<@${botId}>`, "").replaceAll(`<@!${botId}>`, "").trim();
}

function threadName(text: string, authorName: string | undefined): string {
  const firstLine = text.split("\n")[0]?.trim() ?? "";
  const name = firstLine !== "" ? firstLine : `Parley with ${authorName ?? "you"}`;
  return truncate(name, Math.min(DISCORD_LIMITS.threadNameChars, 80));
}
