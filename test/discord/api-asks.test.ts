import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CreateOutcome } from "../../src/ports/ask-api.js";
import { API_TOKENS } from "../api/api-client.js";
import { snowflake } from "../fakes/fake-discord-payloads.js";
import { ALICE, BOB, componentWith, customIds, DiscordHarness } from "./discord-harness.js";

let harness: DiscordHarness;

beforeEach(async () => {
  harness = await new DiscordHarness({ apiTokens: API_TOKENS }).start();
});

afterEach(async () => {
  await harness.close();
});

/** What the HTTP route does with a POST /v1/asks body, for the token `ci`. */
function create(body: Record<string, unknown>): Promise<CreateOutcome> {
  return harness.engine.api.create("ci", body);
}

function created(outcome: CreateOutcome): string {
  if (outcome.kind !== "created") throw new Error(`expected a created ask, got ${JSON.stringify(outcome)}`);
  return outcome.view.id;
}

const confirm = { type: "confirm", question: "Ship release 1.4 to production?" };

/** The card of an ask, once it is posted (cards are posted after create returns). */
async function cardOf(thread: string, askId: string): Promise<Record<string, unknown>> {
  return harness.until("the card", () =>
    harness.discord.botMessagesIn(thread).find((message) => customIds(message).some((id) => id.startsWith(`ask:${askId}:`))),
  );
}

/** REST calls that create something on Discord: messages and threads. */
function posts(): Array<{ method: string; path: string }> {
  return harness.discord.calls.filter((call) => call.method === "POST" && call.path.startsWith("/channels/"));
}

describe("asks from the API on Discord", () => {
  it("without a thread: an opener in the channel, a thread started from it, the card in that thread; a tap answers it", async () => {
    const channel = harness.discord.channelId;
    const askId = created(await create({ channel: `discord:${channel}`, ask: confirm }));

    // The opener names the token and the question; the thread is started from it and so takes its id.
    const opener = harness.discord.botMessagesIn(channel).at(-1)!;
    expect(String(opener.content)).toContain("ci");
    expect(String(opener.content)).toContain("Ship release 1.4 to production?");
    const thread = String(opener.id);
    const paths = posts().map((call) => call.path);
    expect(paths.slice(0, 2)).toEqual([`/channels/${channel}/messages`, `/channels/${channel}/messages/${thread}/threads`]);
    expect(harness.discord.threadIds()).toContain(thread);
    const threadName = String(harness.discord.calls.find((call) => call.path.endsWith("/threads"))?.body?.name);
    expect(threadName).toContain("Ship release 1.4 to production?");
    expect(threadName.length).toBeLessThanOrEqual(100);

    const card = await cardOf(thread, askId);
    expect(String(card.content)).toContain("Ship release 1.4 to production?");
    expect(posts().filter((call) => call.path === `/channels/${thread}/messages`)).toHaveLength(1);
    // No agent turn waits on an API ask: its card has Cancel but no Stop.
    expect(customIds(card).at(-1)).toBe(`ask:${askId}:cancel`);
    expect(customIds(card).some((id) => id.startsWith("stop:"))).toBe(false);

    // Without answerers anyone who sees the card may answer.
    const tap = harness.discord.click(BOB, card, componentWith(card, /:opt:0$/).custom_id);
    await harness.discord.callbackOf(tap);
    await harness.quiet();
    const view = await harness.engine.api.get("ci", askId);
    expect(view).toMatchObject({ id: askId, status: "answered", result: { ok: true, value: true }, answered_by: `discord:${BOB.id}` });
    expect(String(harness.discord.message(String(card.id))?.content)).toContain(`<@${BOB.id}>`);
    expect(harness.discord.message(String(card.id))?.components).toEqual([]);
    // The agent was never involved.
    expect(harness.anthropic.requests).toHaveLength(0);
  });

  it("with a thread of the channel: the card goes into that thread and no new thread is started", async () => {
    const channel = harness.discord.channelId;
    const thread = harness.discord.addChannel("thread", channel);
    const askId = created(await create({ channel: `discord:${channel}`, thread, ask: confirm, answerers: [`discord:${ALICE.id}`] }));
    const card = await cardOf(thread, askId);
    expect(harness.discord.calls.some((call) => call.path.endsWith("/threads"))).toBe(false);
    expect(harness.discord.botMessagesIn(channel)).toHaveLength(0);

    // Only the named answerer: Bob's tap is refused, Alice's answers.
    const refused = harness.discord.click(BOB, card, componentWith(card, /:opt:1$/).custom_id);
    await harness.discord.callbackOf(refused);
    expect((await harness.engine.api.get("ci", askId))?.status).toBe("pending");
    const tap = harness.discord.click(ALICE, card, componentWith(card, /:opt:1$/).custom_id);
    await harness.discord.callbackOf(tap);
    await harness.quiet();
    expect(await harness.engine.api.get("ci", askId)).toMatchObject({
      status: "answered",
      result: { ok: true, value: false },
      answered_by: `discord:${ALICE.id}`,
    });

    // The thread is free again: a second ask goes there too.
    const second = created(await create({ channel: `discord:${channel}`, thread, ask: { question: "Release notes?", type: "input" } }));
    await cardOf(thread, second);
  });

  it("a long question is cut for the thread's name without cutting an emoji in two", async () => {
    // The thread is named by the question itself, in plain words: the 99th UTF-16 unit is the first half of a 🚀, left out.
    const question = `${"a".repeat(98)}${"🚀".repeat(20)}`;
    created(await create({ channel: `discord:${harness.discord.channelId}`, ask: { question } }));
    const name = String(harness.discord.calls.find((call) => call.path.endsWith("/threads"))?.body?.name);
    expect(name.length).toBeLessThanOrEqual(100);
    expect(name).toBe(`${"a".repeat(98)}…`);
    expect(name).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
  });

  it("refuses a place Parley cannot post to, says what to fix, and posts nothing", async () => {
    const channel = harness.discord.channelId;
    const otherChannel = harness.discord.addChannel("text");
    const otherThread = harness.discord.addChannel("thread", otherChannel);
    const ownThread = harness.discord.addChannel("thread", channel);
    const dm = harness.discord.dmChannelOf(ALICE);
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ channel: `discord:${channel}`, thread: otherThread }, /"thread".*not a thread of channel/],
      [{ channel: `discord:${snowflake()}` }, /no such channel/],
      [{ channel: `discord:${channel}`, thread: snowflake() }, /no such thread/],
      [{ channel: `discord:${dm}` }, /server's text channel/],
      // A thread is not a channel a thread can be started in.
      [{ channel: `discord:${ownThread}` }, /server's text channel/],
      [{ channel: `discord:${channel}`, thread: channel }, /not a thread/],
      // Not a snowflake: Discord would answer 400, not 404.
      [{ channel: "discord:general" }, /channel id/],
      [{ channel: `discord:${channel}`, thread: "1700000000.000100" }, /thread id/],
    ];
    const before = posts().length;
    for (const [place, words] of cases) {
      const outcome = await create({ ...place, ask: confirm });
      expect(outcome.kind, JSON.stringify(place)).toBe("invalid");
      const error = outcome.kind === "invalid" ? outcome.error : "";
      expect(error, JSON.stringify(place)).toMatch(/^ERROR: /);
      expect(error, JSON.stringify(place)).toMatch(words);
    }
    await harness.quiet();
    expect(posts()).toHaveLength(before);
    expect(harness.store.db.prepare("SELECT COUNT(*) AS n FROM asks").get()).toEqual({ n: 0 });
  });
});
