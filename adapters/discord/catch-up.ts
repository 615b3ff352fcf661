import { type Client, type Message, SnowflakeUtil } from "discord.js";
import type { Conversation } from "../../src/ports/conversation.js";
import type { Logger } from "../../src/ports/logger.js";
import { describeError } from "./discord-facts.js";
import { PLATFORM } from "./parse-message.js";

/** The newest messages read per channel when catching up after a restart; Discord pages them by 100. */
const CATCH_UP_MESSAGES = 100;

/** At most this many channels with no conversation are read, the most recently active first. */
const CATCH_UP_ACTIVE_CHANNELS = 50;

/**
 * After a restart the gateway starts a new session and replays nothing: messages sent while Parley was down are
 * read from each recently active conversation and handed to `feed` (the normal path, where claimed ids are
 * dropped). Channels come first: a mention there opens a conversation, and one sent while Parley was down (or whose
 * thread was opened just before a crash) is in no thread yet. Those read are the channels of the conversations,
 * and the guild channels whose newest message (READY's `last_message_id`, no request needed) is in the window.
 */
export async function catchUp(
  client: Client,
  conversation: Conversation,
  feed: (message: Message) => Promise<void>,
  logger: Logger,
): Promise<void> {
  const { since, conversations } = await conversation.recentConversations(PLATFORM);
  // In a DM the conversation is the channel itself.
  const channels = new Set(conversations.filter((place) => place.channel !== place.thread).map((place) => place.channel));
  for (const channelId of activeChannels(client, since)) channels.add(channelId);
  let fed = 0;
  for (const channelId of [...channels, ...conversations.map((place) => place.thread)]) {
    try {
      const channel = await client.channels.fetch(channelId);
      if (!channel?.isTextBased()) continue;
      // The newest ones: what was sent while Parley was down is the end of the channel. Not cached: they are read
      // once, and a cached message would hide a later delivery of it from the store's own dedupe.
      const newest = await channel.messages.fetch({ limit: CATCH_UP_MESSAGES, cache: false });
      const missed = [...newest.values()].filter((message) => message.createdTimestamp >= since);
      // Oldest first, as they were sent; bots (this one included) are dropped by the usual route.
      for (const message of missed.sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1))) {
        await feed(message);
        fed++;
      }
    } catch (error) {
      // A channel or thread deleted, or no Read Message History: nothing to catch up there.
      logger.warn({ err: describeError(error), channelId }, "discord-catch-up skipped");
    }
  }
  logger.info({ conversations: conversations.length, channels: channels.size, messages: fed }, "discord-caught-up");
}

/** Guild text channels whose newest message is at or after `since`, newest first: where a missed mention can be. */
function activeChannels(client: Client, since: number): string[] {
  const active: Array<{ id: string; at: number }> = [];
  for (const channel of client.channels.cache.values()) {
    if (!channel.isTextBased() || channel.isThread() || channel.isDMBased() || !channel.lastMessageId) continue;
    const at = SnowflakeUtil.timestampFrom(channel.lastMessageId);
    if (at >= since) active.push({ id: channel.id, at });
  }
  return active
    .sort((a, b) => b.at - a.at)
    .slice(0, CATCH_UP_ACTIVE_CHANNELS)
    .map((channel) => channel.id);
}
