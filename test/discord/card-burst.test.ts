import { afterEach, describe, expect, it } from "vitest";
import { readCardRef } from "../../adapters/discord/card-ref.js";
import { API_TOKENS } from "../api/api-client.js";
import { FakeDiscord } from "../fakes/fake-discord.js";
import { type Fault, type FaultPlan, FaultProxy, type ProxiedRequest } from "../support/fault-proxy.js";
import { ALICE, customIds, DiscordHarness } from "./discord-harness.js";

/**
 * Issue 15, "Discord rate limits (429 with Retry-After) and 5xx: honoured and retried without duplicating posts; a
 * burst of 200 cards in one channel arrives complete and in order". A program opens 200 asks in one channel through
 * the API, one after another: each is an opener in the channel, a thread started from it and the card in that
 * thread, 600 posts. On the way to Discord, once each and counted per kind of post: every 50th opener and card and
 * every 100th thread start is answered 429 the way Discord rate-limits (`Retry-After`, `X-RateLimit-*`,
 * `retry_after` in the body); every 50th opener, offset, 502 before Discord sees it; every 50th post of each kind,
 * offset again, 500 after Discord acted on it (the answer was lost, so discord.js's retry meets the opener's or the
 * card's nonce, or the thread already started).
 */

const ASKS = 200;
const RETRY_AFTER_S = 1;

/** The 429 Discord sends when a bucket is exhausted, headers and body as @discordjs/rest reads them. */
function rateLimited(): Fault {
  const resetAt = Date.now() / 1000 + RETRY_AFTER_S;
  return {
    status: 429,
    headers: {
      "content-type": "application/json",
      "retry-after": String(RETRY_AFTER_S),
      "x-ratelimit-limit": "5",
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset": resetAt.toFixed(3),
      "x-ratelimit-reset-after": RETRY_AFTER_S.toFixed(3),
      "x-ratelimit-bucket": "fake-burst-bucket",
      "x-ratelimit-scope": "user",
    },
    body: JSON.stringify({ message: "You are being rate limited.", retry_after: RETRY_AFTER_S, global: false }),
  };
}

type PostKind = "opener" | "thread" | "card";

/** Openers go to the channel itself, cards to the threads started from them. */
function kindOf(channel: string, path: string): PostKind | undefined {
  if (/^\/api\/v10\/channels\/\d+\/messages\/\d+\/threads$/.test(path)) return "thread";
  if (!/^\/api\/v10\/channels\/\d+\/messages$/.test(path)) return undefined;
  return path === `/api/v10/channels/${channel}/messages` ? "opener" : "card";
}

function burstPlan(channel: string): FaultPlan {
  const counts: Record<PostKind, number> = { opener: 0, thread: 0, card: 0 };
  const json = { "content-type": "application/json" };
  return ({ method, path, seen }) => {
    const kind = method === "POST" ? kindOf(channel, path) : undefined;
    if (!kind || seen > 0) return undefined;
    const index = ++counts[kind];
    // Thread starts are rate-limited less often: each 429 on the create's path holds the next create for a second.
    if (index % (kind === "thread" ? 100 : 50) === 7) return rateLimited();
    if (kind === "opener" && index % 50 === 19) return { status: 502, headers: json, body: '{"message":"502: Bad Gateway","code":0}' };
    if (index % 50 === 31)
      return { status: 500, headers: json, body: '{"message":"500: Internal Server Error","code":0}', afterForwarding: true };
    return undefined;
  };
}

/** The fake Discord API behind a FaultProxy: discord.js is given the proxy's address for REST. */
class RateLimitedDiscord extends FakeDiscord {
  proxy: FaultProxy | undefined;

  override async start(): Promise<this> {
    await super.start();
    this.proxy = await new FaultProxy(super.url.replace(/\/api$/, ""), burstPlan(this.channelId)).start();
    return this;
  }

  override get url(): string {
    return this.proxy ? `${this.proxy.url}/api` : super.url;
  }

  override async close(): Promise<void> {
    await this.proxy?.close();
    await super.close();
  }
}

class BurstHarness extends DiscordHarness {
  override readonly discord = new RateLimitedDiscord();
}

let harness: BurstHarness;

afterEach(async () => {
  await harness.close();
});

describe("a burst of cards in one Discord channel under rate limits", () => {
  it(`posts ${ASKS} asks' openers, threads and cards once each, in order, honouring 429 and retrying 5xx`, async () => {
    harness = await new BurstHarness({ apiTokens: API_TOKENS }).start();
    const channel = harness.discord.channelId;
    const started = Date.now();
    const askIds: string[] = [];
    for (let index = 1; index <= ASKS; index++) {
      const outcome = await harness.engine.api.create("ci", {
        channel: `discord:${channel}`,
        ask: { type: "confirm", question: `Ship build ${index}?` },
        answerers: [`discord:${ALICE.id}`],
      });
      if (outcome.kind !== "created") throw new Error(`ask ${index} was not created: ${JSON.stringify(outcome)}`);
      askIds.push(outcome.view.id);
    }
    await harness.quiet();
    const seconds = (Date.now() - started) / 1000;

    const proxy = harness.discord.proxy!;
    const limited = proxy.faults(429);
    const serverErrors = [...proxy.faults(500), ...proxy.faults(502)];
    console.log(
      `[burst] ${JSON.stringify({ platform: "discord", asks: ASKS, requests: proxy.requests.length, served429: limited.length, served5xx: serverErrors.length, seconds })}`,
    );
    expect(limited).toHaveLength(10);
    expect(serverErrors).toHaveLength(16);

    // Honoured: a rate-limited post came again no sooner than Retry-After said; every faulted post was retried.
    for (const request of limited) {
      const again = nextSame(proxy.requests, request);
      expect(again, "a rate-limited post was never retried").toBeDefined();
      expect(again!.at - request.at).toBeGreaterThanOrEqual(RETRY_AFTER_S * 1000 - 20);
    }
    for (const request of serverErrors) expect(nextSame(proxy.requests, request), "a 5xx post was never retried").toBeDefined();

    // Complete, once each, in order: the channel holds the 200 openers as the asks were made; each opener's thread
    // holds that ask's card and nothing else, and the ask stored that card.
    const openers = harness.discord.botMessagesIn(channel);
    expect(openers).toHaveLength(ASKS);
    const threads = new Set(harness.discord.threadIds());
    for (const [index, askId] of askIds.entries()) {
      const opener = openers[index]!;
      expect(String(opener.content)).toContain(`Ship build ${index + 1}?`);
      const found = await harness.store.getAskWithSession(askId);
      expect(found?.session.conversation.thread).toBe(String(opener.id));
      expect(threads.has(String(opener.id))).toBe(true);
      const inThread = harness.discord.botMessagesIn(String(opener.id));
      expect(
        inThread.map((message) => customIds(message).some((id) => id.startsWith(`ask:${askId}:`))),
        `thread of ask ${index + 1}`,
      ).toEqual([true]);
      expect(readCardRef(found?.ask.cardRef ?? null)?.messageId).toBe(String(inThread[0]!.id));
    }
  }, 60_000);
});

/** The next request with the same method, path and body after `request` (its retry). */
function nextSame(requests: readonly ProxiedRequest[], request: ProxiedRequest): ProxiedRequest | undefined {
  const from = requests.indexOf(request);
  return requests
    .slice(from + 1)
    .find((later) => later.method === request.method && later.path === request.path && later.body === request.body);
}
