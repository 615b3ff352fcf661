import { randomBytes } from "node:crypto";
import { type APIChannel, type APIMessage, ChannelType, DiscordAPIError, type REST, Routes } from "discord.js";
import { PlaceError } from "../../src/ports/errors.js";
import type { AskPlace } from "../../src/ports/platform-adapter.js";
import type { ConversationRef } from "../../src/ports/session-store.js";
import { toDiscordMarkdown } from "./discord-dialect.js";
import { DISCORD_LIMITS, truncate } from "./discord-limits.js";
import { PLATFORM } from "./parse-message.js";

const NO_MENTIONS = { parse: [] as [] };
/** Discord's answer to starting a thread from a message that already has one. */
const THREAD_ALREADY_EXISTS = 160004;
/** Discord's ids are snowflakes; it answers any other id in a path with 400 (50035), not 404. */
const SNOWFLAKE = /^\d{1,20}$/;
/** The channels a thread can be started in from a message. */
const THREAD_PARENTS: readonly ChannelType[] = [ChannelType.GuildText, ChannelType.GuildAnnouncement];
const THREADS: readonly ChannelType[] = [ChannelType.PublicThread, ChannelType.PrivateThread, ChannelType.AnnouncementThread];

function refused(what: "channel" | "thread") {
  return (error: unknown): never => {
    if (error instanceof DiscordAPIError && error.status === 404)
      throw new PlaceError(`Discord has no such ${what}, or Parley cannot see it: check the id, and that Parley may view the channel`);
    if (error instanceof DiscordAPIError && error.status === 403)
      throw new PlaceError("Parley may not post there: give it View Channel, Send Messages and Create Public Threads");
    throw error;
  };
}

function checkId(id: string, what: "channel" | "thread"): void {
  if (!SNOWFLAKE.test(id)) throw new PlaceError(`a Discord ${what} id is a number such as 123456789012345678; got "${id}"`);
}

/**
 * Where an API ask goes on Discord: the thread given (it must belong to the channel), or a new thread started from a
 * short message naming who asks. A thread started from a message takes that message's id.
 */
export async function placeDiscordAsk(rest: REST, place: AskPlace, threadName: string): Promise<ConversationRef> {
  checkId(place.channel, "channel");
  if (place.thread !== undefined) {
    checkId(place.thread, "thread");
    const thread = (await rest.get(Routes.channel(place.thread)).catch(refused("thread"))) as APIChannel & {
      parent_id?: string | null;
      guild_id?: string;
    };
    if (!THREADS.includes(thread.type))
      throw new PlaceError(`"thread" ${place.thread} is not a thread: give a thread of the channel, or omit "thread" to start one`);
    if (thread.parent_id !== place.channel || !thread.guild_id)
      throw new PlaceError(
        `"thread" ${place.thread} is not a thread of channel ${place.channel}: give a thread of that channel, or omit "thread" to start one`,
      );
    return { platform: PLATFORM, workspace: thread.guild_id, channel: place.channel, thread: place.thread };
  }
  const channel = (await rest.get(Routes.channel(place.channel)).catch(refused("channel"))) as APIChannel & { guild_id?: string };
  // Checked before anything is posted: a thread cannot be started in a DM, a thread, a forum or a voice channel.
  if (!channel.guild_id || !THREAD_PARENTS.includes(channel.type))
    throw new PlaceError(
      `asks go to a server's text channel, not a DM, a thread or a forum: give the text channel's id, and a thread of it as "thread"`,
    );
  // discord.js retries a 5xx with the same body; when Discord had posted the opener before answering, the enforced
  // nonce gets that message back instead of a second opener.
  const nonce = randomBytes(12).toString("base64url");
  const body = { content: toDiscordMarkdown(place.opener), allowed_mentions: NO_MENTIONS, nonce, enforce_nonce: true };
  const opener = (await rest.post(Routes.channelMessages(place.channel), { body }).catch(refused("channel"))) as APIMessage;
  await rest
    .post(Routes.threads(place.channel, opener.id), {
      body: { name: truncate(threadName, DISCORD_LIMITS.threadNameChars) || "Question", auto_archive_duration: 1440 },
    })
    .catch((error: unknown) => {
      // discord.js retries a 5xx; when Discord had started the thread before answering it, the retry meets that thread.
      if (error instanceof DiscordAPIError && error.code === THREAD_ALREADY_EXISTS) return;
      refused("channel")(error);
    });
  return { platform: PLATFORM, workspace: channel.guild_id, channel: place.channel, thread: opener.id };
}
