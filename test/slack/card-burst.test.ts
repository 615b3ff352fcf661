import { afterEach, describe, expect, it } from "vitest";
import { readCardRef } from "../../adapters/slack/card-ref.js";
import { API_TOKENS } from "../api/api-client.js";
import { reply } from "../fakes/fake-anthropic.js";
import { FAKE_BOT_USER_ID, FakeSlackApi } from "../fakes/fake-slack-api.js";
import { type FaultPlan, FaultProxy, type ProxiedRequest } from "../support/fault-proxy.js";
import { ALICE, actionIdsOf, SlackHarness } from "./slack-harness.js";
import { messageEvent, nextTs } from "./slack-payloads.js";

/**
 * Issue 15, "Slack rate limits (429 with Retry-After) and 5xx: honoured and retried without duplicating posts; a
 * burst of 200 cards in one channel arrives complete and in order". A program opens 200 asks in one channel through
 * the API, one after another: each is a top-level opener and its card in the opener's thread, 400 posts. On the way
 * to Slack every 40th distinct post is answered 429 with `Retry-After: 1` and every 50th 503, once each, before
 * Slack sees it (Slack posted nothing).
 */

const ASKS = 200;
const CHANNEL = "C_BURST";
const RETRY_AFTER_S = 1;

/** The first answer to a post is a fault for every 40th (429) and 50th (503) distinct post, in order of arrival. */
function burstPlan(): FaultPlan {
  const posts: string[] = [];
  return ({ path, body, seen }) => {
    if (!path.startsWith("/api/chat.postMessage") || seen > 0) return undefined;
    posts.push(body);
    const index = posts.length;
    if (index % 40 === 7) {
      const headers = { "retry-after": String(RETRY_AFTER_S), "content-type": "application/json" };
      return { status: 429, headers, body: '{"ok":false,"error":"ratelimited"}' };
    }
    if (index % 50 === 19) return { status: 503, headers: { "content-type": "text/plain" }, body: "Service Unavailable" };
    return undefined;
  };
}

/** The fake Slack Web API behind a FaultProxy: the adapter is given the proxy's address. */
class RateLimitedSlackApi extends FakeSlackApi {
  proxy: FaultProxy | undefined;

  constructor(private readonly plan: () => FaultPlan = burstPlan) {
    super();
  }

  override async start(): Promise<this> {
    await super.start();
    this.proxy = await new FaultProxy(this.url, this.plan()).start();
    return this;
  }

  override get apiUrl(): string {
    return `${this.proxy?.url ?? this.url}/api/`;
  }

  override async close(): Promise<void> {
    await this.proxy?.close();
    await super.close();
  }
}

class BurstHarness extends SlackHarness {
  override readonly slack = new RateLimitedSlackApi();
}

/** Every third card post reaches Slack, which posts it, and its answer is lost on the way back (a gateway's 500). */
function lostAnswerPlan(): FaultPlan {
  let cards = 0;
  return ({ path, body, seen }) => {
    if (!path.startsWith("/api/chat.postMessage") || !body.includes("thread_ts") || seen > 0) return undefined;
    cards++;
    if (cards % 3 !== 1) return undefined;
    return { status: 500, headers: { "content-type": "text/plain" }, body: "Internal Server Error", afterForwarding: true };
  };
}

class LostAnswerHarness extends SlackHarness {
  override readonly slack = new RateLimitedSlackApi(lostAnswerPlan);
}

/** Every other API ask's opener reaches Slack, which posts it, and its answer is lost (a gateway's 504). */
function lostOpenerPlan(): FaultPlan {
  let openers = 0;
  return ({ path, body, seen }) => {
    if (!path.startsWith("/api/chat.postMessage") || !body.includes("parley_opener") || seen > 0) return undefined;
    openers++;
    if (openers % 2 === 0) return undefined;
    return { status: 504, headers: { "content-type": "text/plain" }, body: "Gateway Timeout", afterForwarding: true };
  };
}

class LostOpenerHarness extends SlackHarness {
  override readonly slack = new RateLimitedSlackApi(lostOpenerPlan);
}

/** The first post of each part of a final answer reaches Slack, and its answer is lost. */
function lostReplyPlan(): FaultPlan {
  return ({ path, body, seen }) => {
    if (!path.startsWith("/api/chat.postMessage") || !body.includes("parley_reply") || seen > 0) return undefined;
    return { status: 502, headers: { "content-type": "text/plain" }, body: "Bad Gateway", afterForwarding: true };
  };
}

class LostReplyHarness extends SlackHarness {
  override readonly slack = new RateLimitedSlackApi(lostReplyPlan);
}

/** Opens `count` confirm asks in the channel through the API, one after another: "<verb> 1?", "<verb> 2?", … */
async function openAsks(count: number, verb: string): Promise<string[]> {
  const askIds: string[] = [];
  for (let index = 1; index <= count; index++) {
    const outcome = await harness.engine.api.create("ci", {
      channel: `slack:${CHANNEL}`,
      ask: { type: "confirm", question: `${verb} ${index}?` },
      answerers: [`slack:${ALICE}`],
    });
    if (outcome.kind !== "created") throw new Error(`ask ${index} was not created: ${JSON.stringify(outcome)}`);
    askIds.push(outcome.view.id);
  }
  return askIds;
}

let harness: BurstHarness | LostAnswerHarness | LostReplyHarness | LostOpenerHarness;

afterEach(async () => {
  await harness.close();
});

describe("a burst of cards in one Slack channel under rate limits", () => {
  it(`posts ${ASKS} asks' openers and cards once each, in order, honouring 429 Retry-After and retrying 503`, async () => {
    harness = await new BurstHarness({ apiTokens: API_TOKENS }).start();
    const started = Date.now();
    const askIds: string[] = [];
    for (let index = 1; index <= ASKS; index++) {
      const outcome = await harness.engine.api.create("ci", {
        channel: `slack:${CHANNEL}`,
        ask: { type: "confirm", question: `Ship build ${index}?` },
        answerers: [`slack:${ALICE}`],
      });
      if (outcome.kind !== "created") throw new Error(`ask ${index} was not created: ${JSON.stringify(outcome)}`);
      askIds.push(outcome.view.id);
    }
    await harness.engine.idle();
    const seconds = (Date.now() - started) / 1000;

    const proxy = harness.slack.proxy!;
    const rateLimited = proxy.faults(429);
    const unavailable = proxy.faults(503);
    const posts = harness.slack.callsOf("chat.postMessage");
    console.log(
      `[burst] ${JSON.stringify({ platform: "slack", asks: ASKS, requests: proxy.requests.length, posts: posts.length, served429: rateLimited.length, served503: unavailable.length, seconds })}`,
    );
    expect(rateLimited.length).toBe(10);
    expect(unavailable.length).toBe(8);

    // Honoured: a post answered 429 came again no sooner than Retry-After said.
    for (const limited of rateLimited) {
      const again = nextSame(proxy.requests, limited);
      expect(again, "a rate-limited post was never retried").toBeDefined();
      expect(again!.at - limited.at).toBeGreaterThanOrEqual(RETRY_AFTER_S * 1000 - 20);
    }
    // Retried: every faulted post went out afterwards, and Slack refused nothing.
    for (const faulted of [...rateLimited, ...unavailable]) expect(nextSame(proxy.requests, faulted)?.status).toBe(200);
    expect(posts.every((call) => call.ok)).toBe(true);

    // Complete, once each: 200 openers and 200 cards, one card per ask, the one whose ts the ask stored.
    expect(posts).toHaveLength(2 * ASKS);
    const openers = harness.slack.messages.filter((message) => message.channel === CHANNEL && message.threadTs === undefined);
    expect(openers).toHaveLength(ASKS);
    for (const [index, askId] of askIds.entries()) {
      const cards = posts.filter((call) => actionIdsOf(call.params.blocks).some((id) => id.startsWith(`ask:${askId}:`)));
      expect(cards, `card posts of ask ${index + 1}`).toHaveLength(1);
      const found = await harness.store.getAskWithSession(askId);
      expect(readCardRef(found?.ask.cardRef ?? null)?.ts).toBe(String(cards[0]!.result.ts));
      // In order: the channel shows the openers as the asks were made, and each thread its opener, then its card only.
      const opener = openers[index]!;
      expect(opener.text).toContain(`Ship build ${index + 1}?`);
      expect(found?.session.conversation.thread).toBe(opener.ts);
      const thread = harness.slack.messages.filter((message) => message.threadTs === opener.ts);
      expect(thread.map((message) => message.ts)).toEqual([String(cards[0]!.result.ts)]);
      expect(Number(thread[0]!.ts)).toBeGreaterThan(Number(opener.ts));
    }
  }, 60_000);
});

describe("a card whose post Slack took but whose answer was lost", () => {
  it("is found by its metadata and adopted, never posted a second time (Slack's client would post it again)", async () => {
    harness = await new LostAnswerHarness({ apiTokens: API_TOKENS }).start();
    const askIds = await openAsks(12, "Deploy");
    await harness.engine.idle();
    const lost = harness.slack.proxy!.faults(500);
    expect(lost).toHaveLength(4);
    const posts = harness.slack.callsOf("chat.postMessage");
    for (const askId of askIds) {
      const cards = posts.filter((call) => actionIdsOf(call.params.blocks).some((id) => id.startsWith(`ask:${askId}:`)));
      expect(cards, `card posts of ask ${askId}`).toHaveLength(1);
      const found = await harness.store.getAskWithSession(askId);
      expect(readCardRef(found?.ask.cardRef ?? null)?.ts).toBe(String(cards[0]!.result.ts));
    }
    expect(harness.slack.callsOf("conversations.replies").length).toBeGreaterThanOrEqual(4);
  }, 30_000);
});

describe("API ask openers whose post Slack took but whose answer was lost", () => {
  it("each shows once in the channel, and its ask lives in the thread of the one that did", async () => {
    harness = await new LostOpenerHarness().start();
    const askIds = await openAsks(6, "Release");
    await harness.engine.idle();
    expect(harness.slack.proxy!.faults(504)).toHaveLength(3);
    const openers = harness.slack.messages.filter((message) => message.channel === CHANNEL && message.threadTs === undefined);
    expect(openers.map((opener) => opener.text.match(/Release \d/)?.[0])).toEqual(askIds.map((_, index) => `Release ${index + 1}`));
    for (const [index, askId] of askIds.entries()) {
      const found = await harness.store.getAskWithSession(askId);
      expect(found?.session.conversation.thread).toBe(openers[index]!.ts);
    }
    expect(harness.slack.callsOf("conversations.history")).toHaveLength(3);
  }, 30_000);
});

describe("a final answer whose post Slack took but whose answer was lost", () => {
  it("shows once in the thread, each part of a long one too", async () => {
    harness = await new LostReplyHarness().start();
    const parts = Array.from({ length: 40 }, (_, index) => `Part ${index}: ${"words ".repeat(60)}`);
    harness.anthropic.script(reply("Short and done."), reply(parts.join("\n\n")));
    for (const [index, thread] of [nextTs(), nextTs()].entries()) {
      const mention = messageEvent("app_mention", { user: ALICE, text: `<@${FAKE_BOT_USER_ID}> go`, ts: thread });
      await harness.sender.event(mention, { teamId: "T_PARLEY", eventId: `EvReply${index}` });
      await harness.settle("handleMessage", index + 1);
    }
    const lost = harness.slack.proxy!.faults(502);
    const answers = harness.slack
      .callsOf("chat.postMessage")
      .filter((call) => JSON.stringify(call.params.metadata ?? "").includes("parley_reply"));
    const keys = answers.map((call) => (call.params.metadata as { event_payload: { reply_key: string } }).event_payload.reply_key);
    expect(lost.length).toBeGreaterThanOrEqual(3);
    expect(lost).toHaveLength(new Set(keys).size);
    expect(keys).toEqual([...new Set(keys)]);
    expect(answers.filter((call) => String(call.params.text).includes("Short and done."))).toHaveLength(1);
  }, 30_000);
});

/** The next request with the same method, path and body after `request` (its retry). */
function nextSame(requests: readonly ProxiedRequest[], request: ProxiedRequest): ProxiedRequest | undefined {
  const from = requests.indexOf(request);
  return requests
    .slice(from + 1)
    .find((later) => later.method === request.method && later.path === request.path && later.body === request.body);
}
