import { type APIChannel, type APIMessage, DiscordAPIError, type REST, Routes } from "discord.js";
import { PlaceError } from "../../src/ports/errors.js";
import type { AskPlace } from "../../src/ports/platform-adapter.js";
import type { ConversationRef } from "../../src/ports/session-store.js";
import { toDiscordMarkdown } from "./discord-dialect.js";
import { PLATFORM } from "./parse-message.js";

const NO_MENTIONS = { parse: [] as [] };
/** A thread's name holds at most 100 characters. */
const THREAD_NAME_CHARS = 100;

function refused(error: unknown): never {
  if (error instanceof DiscordAPIError && error.status === 404)
    throw new PlaceError("Discord has no such channel, or Parley cannot see it");
  if (error instanceof DiscordAPIError && error.status === 403)
    throw new PlaceError("Parley may not post there: give it View Channel, Send Messages and Create Public Threads");
  throw error;
}

/**
 * Where an API ask goes on Discord: the thread given (it must belong to the channel), or a new thread started from a
 * short message naming who asks. A thread started from a message takes that message's id.
 */
export async function placeDiscordAsk(rest: REST, place: AskPlace, threadName: string): Promise<ConversationRef> {
  if (place.thread !== undefined) {
    const thread = (await rest.get(Routes.channel(place.thread)).catch(refused)) as APIChannel & { parent_id?: string; guild_id?: string };
    if (thread.parent_id !== place.channel || !thread.guild_id) throw new PlaceError("that thread is not in that channel");
    return { platform: PLATFORM, workspace: thread.guild_id, channel: place.channel, thread: place.thread };
  }
  const channel = (await rest.get(Routes.channel(place.channel)).catch(refused)) as APIChannel & { guild_id?: string };
  if (!channel.guild_id) throw new PlaceError("asks go to a server's text channel, not a DM");
  const body = { content: toDiscordMarkdown(place.opener), allowed_mentions: NO_MENTIONS };
  const opener = (await rest.post(Routes.channelMessages(place.channel), { body }).catch(refused)) as APIMessage;
  const name = threadName.length > THREAD_NAME_CHARS ? `${threadName.slice(0, THREAD_NAME_CHARS - 1)}…` : threadName;
  await rest
    .post(Routes.threads(place.channel, opener.id), { body: { name: name || "Question", auto_archive_duration: 1440 } })
    .catch(refused);
  return { platform: PLATFORM, workspace: channel.guild_id, channel: place.channel, thread: opener.id };
}
