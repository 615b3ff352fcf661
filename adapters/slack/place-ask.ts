import type { webApi } from "@slack/bolt";
import { PlaceError } from "../../src/ports/errors.js";
import type { AskPlace } from "../../src/ports/platform-adapter.js";
import type { ConversationRef } from "../../src/ports/session-store.js";
import { errorCode } from "./actor-directory.js";
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

/**
 * Where an API ask goes on Slack: the thread given (checked to exist), or a new one under a short top-level
 * message naming who asks, so the channel sees the question and answers stay in its thread.
 */
export async function placeSlackAsk(client: webApi.WebClient, teamId: string, place: AskPlace): Promise<ConversationRef> {
  const where = { platform: "slack" as const, workspace: teamId, channel: place.channel };
  if (place.thread !== undefined) {
    await client.conversations.replies({ channel: place.channel, ts: place.thread, limit: 1 }).catch(refused);
    return { ...where, thread: place.thread };
  }
  const response = await client.chat
    .postMessage({ channel: place.channel, text: toMrkdwn(place.opener), unfurl_links: false })
    .catch(refused);
  if (!response.ts) throw new Error("chat.postMessage returned no ts");
  return { ...where, channel: response.channel ?? place.channel, thread: response.ts };
}
