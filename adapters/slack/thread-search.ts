import type { webApi } from "@slack/bolt";
import type { ConversationRef } from "../../src/ports/session-store.js";
import { errorCode } from "./actor-directory.js";

/** A message being looked for is in its own session's thread; a thread longer than this is read no further. */
const SEARCH_PAGES = 5;
const SEARCH_PAGE_SIZE = 200;

/**
 * Reads a thread's messages with their metadata (`conversations.replies`, `include_all_metadata`), page by page,
 * until `pick` finds one: how a card or an answer posted by a process that died is found instead of posted twice.
 */
export async function searchThread(
  client: webApi.WebClient,
  conversation: ConversationRef,
  pick: (messages: readonly unknown[]) => string | undefined,
): Promise<string | undefined> {
  const { channel, thread } = conversation;
  let cursor: string | undefined;
  for (let page = 0; page < SEARCH_PAGES; page++) {
    const response = await client.conversations
      .replies({ channel, ts: thread, include_all_metadata: true, limit: SEARCH_PAGE_SIZE, ...(cursor ? { cursor } : {}) })
      .catch((error: unknown) => {
        // No thread (its first message was deleted) holds nothing; any other failure is retried by the sweeper.
        if (errorCode(error) === "thread_not_found") return { messages: [], response_metadata: { next_cursor: "" } };
        throw error;
      });
    const ts = pick(response.messages ?? []);
    if (ts) return ts;
    cursor = response.response_metadata?.next_cursor;
    if (!cursor) return undefined;
  }
  return undefined;
}
