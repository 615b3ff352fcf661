import { webApi } from "@slack/bolt";

/** Tries of one post: the first and five more, about 15 s in all; then the sweeper's re-post takes over. */
const ATTEMPTS = 6;
const FIRST_BACKOFF_MS = 500;

/**
 * A Web API client for posts that must not show twice (cards). Slack's own client retries a 5xx or a lost
 * answer by posting again, though Slack may have posted the first time; this one retries nothing and reports a 429
 * instead of waiting, so `postOnce` decides.
 */
export function postingClient(token: string, options: webApi.WebClientOptions): webApi.WebClient {
  return new webApi.WebClient(token, { ...options, retryConfig: { retries: 0 }, rejectRateLimitedCalls: true });
}

/**
 * Posts once: a 429 (Slack posted nothing) is posted again after its Retry-After; a failure after which the post
 * may have landed (a 5xx, a connection lost before the answer) is looked for with `find` before it is posted again.
 * A refusal (`ok: false`) is thrown at once, as are the failures of the last try.
 */
export async function postOnce<T>(post: () => Promise<T>, find: () => Promise<T | undefined>, backoffMs = FIRST_BACKOFF_MS): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await post();
    } catch (error) {
      if (attempt >= ATTEMPTS) throw error;
      if (error instanceof webApi.WebAPIRateLimitedError) {
        await sleep(error.retryAfter * 1000);
        continue;
      }
      if (!(error instanceof webApi.WebAPIHTTPError || error instanceof webApi.WebAPIRequestError)) throw error;
      await sleep(backoffMs * 2 ** (attempt - 1));
      const found = await find();
      if (found !== undefined) return found;
    }
  }
}

function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}
