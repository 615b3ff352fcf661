import { randomBytes } from "node:crypto";
import type { webApi } from "@slack/bolt";
import { PlaceError } from "../../src/ports/errors.js";
import type { AskPlace } from "../../src/ports/platform-adapter.js";
import type { ConversationRef } from "../../src/ports/session-store.js";
import { errorCode } from "./actor-directory.js";
import { findOpenerTs, openerMetadata } from "./card-metadata.js";
import { postOnce } from "./post-once.js";
import { toMrkdwn } from "./slack-dialect.js";

/** What Slack's refusals mean to the program that sent the ask, and what it can do about them. */
const REFUSALS: Record<string, string> = {
  channel_not_found: "Slack has no such channel, or Parley is not in it: invite the app to the channel",
  not_in_channel: "Parley is not in that channel: invite the app to it (/invite @Parley)",
  is_archived: "that channel is archived",
  thread_not_found: "no thread with that ts in the channel",
  invalid_ts: "that thread is not a Slack message ts such as 1700000000.000100",
};

function refused(error: unknown): never {
  const reason = REFUSALS[errorCode(error)];
  // Anything else (a network failure, Slack down) is Parley's to report as a failure, not the caller's to fix.
  if (reason) throw new PlaceError(reason);
  throw error;
}

/** The clients an API ask is placed with: `client` reads, `poster` posts once (see post-once.ts). */
export interface PlacingClients {
  client: webApi.WebClient;
  poster: webApi.WebClient;
  botId: string;
  backoffMs?: number | undefined;
}

/** How far back in the channel a lost opener is looked for: it was posted moments ago, by this very call. */
const OPENER_SEARCH_LIMIT = 100;

/**
 * Where an API ask goes on Slack: the thread given (checked to exist), or a new one under a short top-level
 * message naming who asks, so the channel sees the question and answers stay in its thread. The opener is posted
 * once: after a failure that Slack may have posted through (a 5xx, a lost answer), it is looked for by its metadata
 * before it is posted again, as a card is.
 */
export async function placeSlackAsk(clients: PlacingClients, teamId: string, place: AskPlace): Promise<ConversationRef> {
  const where = { platform: "slack" as const, workspace: teamId, channel: place.channel };
  if (place.thread !== undefined) {
    await clients.client.conversations.replies({ channel: place.channel, ts: place.thread, limit: 1 }).catch(refused);
    return { ...where, thread: place.thread };
  }
  const openerId = randomBytes(9).toString("base64url");
  const post = async (): Promise<{ channel: string; ts: string }> => {
    const response = await clients.poster.chat.postMessage({
      channel: place.channel,
      text: toMrkdwn(place.opener),
      unfurl_links: false,
      metadata: openerMetadata(openerId),
    });
    if (!response.ts) throw new Error("chat.postMessage returned no ts");
    return { channel: response.channel ?? place.channel, ts: response.ts };
  };
  // Read with the reading client; a user id as the channel (a DM) cannot be read under that id: not found.
  const find = async (): Promise<{ channel: string; ts: string } | undefined> => {
    const history = await clients.client.conversations
      .history({ channel: place.channel, include_all_metadata: true, limit: OPENER_SEARCH_LIMIT })
      .catch(() => undefined);
    const ts = findOpenerTs(history?.messages ?? [], openerId, clients.botId);
    return ts ? { channel: place.channel, ts } : undefined;
  };
  const opener = await postOnce(post, find, clients.backoffMs).catch(refused);
  return { ...where, channel: opener.channel, thread: opener.ts };
}
