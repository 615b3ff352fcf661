import type { Actor } from "../../src/ports/conversation.js";
import type { ConversationRef } from "../../src/ports/session-store.js";
import { DM_WORKSPACE, PLATFORM } from "./parse-message.js";

/** The facts of an interaction's author and channel, read off discord.js's Interaction. */
export interface InteractionFacts {
  userId: string;
  name?: string;
  /** The member's permissions in that channel, as Discord computed them; absent in DMs. */
  hasManageGuild: boolean;
  guildId: string | null;
  channelId: string | null;
  channelKind: "dm" | "thread" | "text" | "other";
  parentId: string | null;
}

/** Admin means Manage Server, from the interaction's member permissions: never from anything typed. */
export function actorFrom(facts: InteractionFacts): Actor {
  return { id: facts.userId, ...(facts.name ? { name: facts.name } : {}), isAdmin: facts.hasManageGuild };
}

/** The conversation an interaction happened in: a thread or a DM; a plain channel holds no session. */
export function conversationFrom(facts: InteractionFacts): ConversationRef | null {
  if (facts.channelId === null) return null;
  if (facts.channelKind === "dm") return { platform: PLATFORM, workspace: DM_WORKSPACE, channel: facts.channelId, thread: facts.channelId };
  if (facts.channelKind === "thread" && facts.guildId !== null && facts.parentId !== null) {
    return { platform: PLATFORM, workspace: facts.guildId, channel: facts.parentId, thread: facts.channelId };
  }
  return null;
}
