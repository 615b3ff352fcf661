import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ask, lastToolResults, reply, text } from "../fakes/fake-anthropic.js";
import { FAKE_BOT_USER_ID } from "../fakes/fake-slack-api.js";
import { ALICE, BOB, SlackHarness, waitFor } from "./slack-harness.js";
import { CHANNEL, DM_CHANNEL, messageEvent, nextTs, tapCard } from "./slack-payloads.js";

let harness: SlackHarness;

beforeEach(async () => {
  harness = await new SlackHarness().start();
});

afterEach(async () => {
  await harness.close();
});

let eventCounter = 0;
async function deliver(event: Record<string, unknown>, retryNum?: number, eventId = `Ev${++eventCounter}`): Promise<number> {
  const response = await harness.sender.event(event, { teamId: "T_PARLEY", eventId }, retryNum === undefined ? {} : { retryNum });
  return response.status;
}

function lastToolResultValue(): unknown {
  const results = lastToolResults(harness.anthropic.requests.at(-1));
  expect(results).toHaveLength(1);
  return JSON.parse(results[0]!.content);
}

describe("Slack round trip through real Bolt", () => {
  it("mention → one button per candidate → tap → tool_result → final answer in the thread → card settled", async () => {
    harness.anthropic.script(
      ask({ question: "Which environment?", candidates: ["staging", "production"] }),
      reply("Deploying to **production**."),
    );
    const ts = nextTs();
    // Slack delivers a mention twice: as app_mention and as its message twin.
    expect(await deliver(messageEvent("app_mention", { user: ALICE, text: `<@${FAKE_BOT_USER_ID}> deploy the app`, ts }))).toBe(200);
    expect(await deliver(messageEvent("message", { user: ALICE, text: `<@${FAKE_BOT_USER_ID}> deploy the app`, ts }))).toBe(200);
    const outcomes = await harness.settle("handleMessage", 2);
    expect(outcomes.map((call) => call.result).sort()).toEqual(["duplicate", "started"]);
    expect(harness.anthropic.requests).toHaveLength(1);
    const firstPrompt = JSON.stringify(harness.anthropic.requests[0]!.body.messages);
    expect(firstPrompt).toContain("deploy the app");
    expect(firstPrompt).not.toContain(FAKE_BOT_USER_ID);

    const card = harness.card(ts);
    const buttons = card.blocks.find((block) => block.type === "actions")!.elements as Array<{ text: { text: string }; action_id: string }>;
    expect(buttons.map((button) => button.text.text)).toEqual(["staging", "production", "Cancel", "Stop"]);
    expect(JSON.stringify(card.blocks)).toContain(`Only <@${ALICE}> or an admin can answer`);
    expect(JSON.stringify(card.blocks)).toContain("Expires <!date^");

    await tapCard(harness.sender, { card, thread: ts, user: ALICE, button: "production", responseUrl: harness.responseUrl });
    expect((await harness.settle("answer", 1))[0]!.result).toEqual({ kind: "accepted" });

    expect(lastToolResultValue()).toEqual({ ok: true, value: "production" });
    const final = harness.posted(ts).at(-1)!;
    // The model's Markdown goes to Slack as written, in a markdown block, with a plain fallback for notifications.
    expect(final.params.blocks).toEqual([{ type: "markdown", text: "Deploying to **production**." }]);
    expect(final.params.text).toBe("Deploying to **production**.");
    const settled = harness.updatesOf(card.ts).at(-1)!;
    expect(JSON.stringify(settled.params.blocks)).toContain(`✅ production — answered by <@${ALICE}>`);
    expect(JSON.stringify(settled.params.blocks)).not.toContain("ask:");
  });

  it("reads a free-text reply in the thread as the answer to the pending ask", async () => {
    harness.anthropic.script(ask({ question: "Which region?", choices: ["eu", "us"] }), reply("ok"));
    const ts = nextTs();
    await deliver(messageEvent("app_mention", { user: ALICE, text: `<@${FAKE_BOT_USER_ID}> pick a region`, ts }));
    await harness.settle("handleMessage", 1);
    const card = harness.card(ts);
    await deliver(messageEvent("message", { user: ALICE, text: "ap-southeast, please", threadTs: ts }));
    expect((await harness.settle("handleMessage", 2))[1]!.result).toBe("answered");
    expect(lastToolResultValue()).toEqual({ ok: true, value: "ap-southeast, please", other: true });
    expect(JSON.stringify(harness.updatesOf(card.ts).at(-1)!.params.blocks)).toContain("✅ “ap-southeast, please” — answered by");
  });

  it("processes a retried event once", async () => {
    harness.anthropic.script(ask({ type: "confirm", question: "Ship it?" }), reply("shipped"));
    const ts = nextTs();
    const event = messageEvent("app_mention", { user: ALICE, text: `<@${FAKE_BOT_USER_ID}> ship`, ts });
    await deliver(event, undefined, "EvSame");
    await deliver(event, 1, "EvSame");
    await deliver(event, 2, "EvSame");
    const outcomes = await harness.settle("handleMessage", 3);
    expect(outcomes.filter((call) => call.result === "started")).toHaveLength(1);
    expect(harness.anthropic.requests).toHaveLength(1);
    expect(harness.posted(ts).filter((call) => JSON.stringify(call.params.blocks ?? "").includes("ask:"))).toHaveLength(1);
  });

  it("answers a double tap exactly once and tells the second tap it was already answered", async () => {
    harness.anthropic.script(ask({ type: "confirm", question: "Restart the database?" }), reply("restarted"));
    const ts = nextTs();
    await deliver(messageEvent("app_mention", { user: ALICE, text: `<@${FAKE_BOT_USER_ID}> restart`, ts }));
    await harness.settle("handleMessage", 1);
    const card = harness.card(ts);
    const tap = () => tapCard(harness.sender, { card, thread: ts, user: ALICE, button: 0, responseUrl: harness.responseUrl });
    await Promise.all([tap(), tap()]);
    const answers = await harness.settle("answer", 2);
    expect(answers.map((call) => (call.result as { kind: string }).kind).sort()).toEqual(["accepted", "already-ended"]);
    expect(harness.anthropic.requests).toHaveLength(2);
    expect(lastToolResultValue()).toEqual({ ok: true, value: true });
    expect(await harness.noticesTo(ALICE, 1)).toEqual(["This question was already answered."]);
  });

  it("talks in a DM without a mention", async () => {
    harness.anthropic.script(ask({ type: "buttons", question: "Tea or coffee?", options: ["tea", "coffee"] }), reply("Coffee it is."));
    const ts = nextTs();
    await deliver(messageEvent("message", { user: ALICE, text: "what should I drink?", channel: DM_CHANNEL, channelType: "im", ts }));
    await harness.settle("handleMessage", 1);
    const card = harness.card(ts);
    expect(harness.slack.callsOf("chat.postMessage").find((call) => call.params.thread_ts === ts)?.params.channel).toBe(DM_CHANNEL);
    await tapCard(harness.sender, { card, thread: ts, user: ALICE, button: 1, channel: DM_CHANNEL, responseUrl: harness.responseUrl });
    await harness.settle("answer", 1);
    expect(lastToolResultValue()).toEqual({ ok: true, value: "coffee" });
    expect(harness.posted(ts).at(-1)!.params.text).toBe("Coffee it is.");
  });

  it("in a DM, a reply below the card (not in its thread) answers it; a new request there starts its own session", async () => {
    harness.anthropic.script(
      ask({ type: "buttons", question: "Tea or coffee?", options: ["tea", "coffee"] }),
      reply("Coffee it is."),
      reply("Here is a recipe."),
    );
    const ts = nextTs();
    await deliver(messageEvent("message", { user: ALICE, text: "what should I drink?", channel: DM_CHANNEL, channelType: "im", ts }));
    await harness.settle("handleMessage", 1);
    const card = harness.card(ts);
    // Alice answers the natural way: a top-level DM message, which is its own "thread" for Slack.
    await deliver(messageEvent("message", { user: ALICE, text: "coffee", channel: DM_CHANNEL, channelType: "im" }));
    expect((await harness.settle("handleMessage", 2)).at(-1)?.result).toBe("answered");
    await waitFor(() => harness.posted(ts).some((call) => call.params.text === "Coffee it is."), "the answer in the first thread");
    expect(lastToolResultValue()).toEqual({ ok: true, value: "coffee" });
    expect(JSON.stringify(harness.updatesOf(card.ts).at(-1)!.params.blocks)).toContain(`coffee — answered by <@${ALICE}>`);
    expect(harness.anthropic.requests).toHaveLength(2);

    // With no question pending, a top-level DM message is a new request in its own thread.
    const next = nextTs();
    await deliver(messageEvent("message", { user: ALICE, text: "and a recipe?", channel: DM_CHANNEL, channelType: "im", ts: next }));
    expect((await harness.settle("handleMessage", 3)).at(-1)?.result).toBe("started");
    await waitFor(() => harness.posted(next).some((call) => call.params.text === "Here is a recipe."), "the recipe in its own thread");
  });

  /** Three questions then an answer, each model step `delayMs` long: the Web API methods called after each tap. */
  async function answerThrough(delayMs: number): Promise<{ ts: string; calls: string[][] }> {
    harness.slack.threadStatusRefusedIn.add(CHANNEL);
    harness.anthropic.delayMs = delayMs;
    harness.anthropic.script(
      ask({ question: "Which environment?", candidates: ["staging", "production"] }),
      ask({ question: "Which region?", candidates: ["eu", "us"] }),
      reply("Deployed."),
    );
    const ts = nextTs();
    await deliver(messageEvent("app_mention", { user: ALICE, text: `<@${FAKE_BOT_USER_ID}> deploy`, ts }));
    await harness.settle("handleMessage", 1);
    await harness.engine.idle();
    const calls: string[][] = [];
    for (let count = 1; count <= 2; count++) {
      const card = harness.card(ts);
      const before = harness.slack.calls.length;
      await tapCard(harness.sender, { card, thread: ts, user: ALICE, button: 1, responseUrl: harness.responseUrl });
      await harness.settle("answer", count);
      await harness.engine.idle();
      calls.push(harness.slack.calls.slice(before).map((call) => call.method));
    }
    return { ts, calls };
  }

  /** Messages in the thread that still show a turn at work (a Stop button or ⏳) once it is over. */
  const stale = (ts: string) => harness.drawn(ts).filter((message) => /stop:|⏳/.test(JSON.stringify(message.params)));

  it("an answered ask with quick steps costs two Web API calls: the settle, then the next card or the answer", async () => {
    const { ts, calls } = await answerThrough(0);
    expect(calls.map((methods) => methods.sort())).toEqual([
      ["chat.postMessage", "chat.update"],
      ["chat.postMessage", "chat.update"],
    ]);
    expect(stale(ts)).toEqual([]);
    // No step took a second, so nothing was shown busy: no thread status call at all.
    expect(harness.slack.callsOf("assistant.threads.setStatus")).toEqual([]);
  });

  it("an answered ask with slow steps costs three: the settle, the status line, and that line edited into the next card or the answer", async () => {
    const { ts, calls } = await answerThrough(1500);
    expect(calls).toEqual([
      ["chat.update", "chat.postMessage", "chat.update"],
      ["chat.update", "chat.postMessage", "chat.update"],
    ]);
    const drawn = harness.drawn(ts);
    // The mention's status line became the first card, each resume's the next card, the last one the answer.
    expect(drawn.map((message) => JSON.stringify(message.params.blocks))).toEqual([
      expect.stringContaining("Which environment?"),
      expect.stringContaining("Which region?"),
      expect.stringContaining("Deployed."),
    ]);
    expect(drawn.at(-1)!.params.metadata).toMatchObject({ event_type: "parley_reply" });
    expect(stale(ts)).toEqual([]);
  });

  it("a status line deleted before its card took its place: the card is looked for, then posted, once", async () => {
    harness.slack.threadStatusRefusedIn.add(CHANNEL);
    harness.anthropic.delayMs = 1500;
    harness.anthropic.script(ask({ type: "confirm", question: "Proceed?" }));
    const ts = nextTs();
    await deliver(messageEvent("app_mention", { user: ALICE, text: `<@${FAKE_BOT_USER_ID}> go`, ts }));
    await waitFor(() => harness.drawn(ts).length > 0, "the status line");
    // Someone deletes the status line while the step runs: Slack answers the card's edit with message_not_found.
    const status = harness.slack.messages.findIndex((message) => message.threadTs === ts);
    harness.slack.messages.splice(status, 1);
    await harness.settle("handleMessage", 1);
    await harness.engine.idle();
    expect(harness.slack.callsOf("chat.update").map((call) => call.error)).toEqual(["message_not_found"]);
    const cards = harness.posted(ts).filter((call) => JSON.stringify(call.params.blocks).includes("Proceed?"));
    expect(cards).toHaveLength(1);
    expect(harness.card(ts).ts).toBe(String(cards[0]!.result.ts));
  });

  it("acknowledges a mention only once it is stored, so a crash before the store leaves Slack to redeliver it", async () => {
    // users.info is slow: the store happens 400 ms after the event arrives.
    harness.slack.latency.set("users.info", 400);
    harness.anthropic.script(reply("Hello."));
    const ts = nextTs();
    const started = Date.now();
    expect(await deliver(messageEvent("app_mention", { user: ALICE, text: `<@${FAKE_BOT_USER_ID}> hi`, ts }))).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    expect(await harness.store.hasEvent(`slack:${CHANNEL}:${ts}`)).toBe(true);
    // A tap is still acknowledged first, whatever its work costs (Bob is looked up, slowly, after the ack).
    harness.anthropic.script(ask({ question: "Which?", candidates: ["a", "b"] }));
    const thread = nextTs();
    await deliver(messageEvent("app_mention", { user: ALICE, text: `<@${FAKE_BOT_USER_ID}> ask me`, ts: thread }));
    await harness.settle("handleMessage", 2);
    const card = harness.card(thread);
    const tapped = Date.now();
    const response = await tapCard(harness.sender, { card, thread, user: ALICE, button: 0, responseUrl: harness.responseUrl });
    expect(response.status).toBe(200);
    expect(Date.now() - tapped).toBeLessThan(350);
  });

  it("ignores other bots, its own messages, edits and channel chatter", async () => {
    const ts = nextTs();
    await deliver(messageEvent("message", { user: BOB, text: "hello team", ts }));
    await deliver(
      messageEvent("message", { user: "U_OTHER_BOT", botId: "B_OTHER", text: `<@${FAKE_BOT_USER_ID}> hi`, subtype: "bot_message" }),
    );
    await deliver(messageEvent("message", { user: FAKE_BOT_USER_ID, text: "my own words", channel: DM_CHANNEL, channelType: "im" }));
    await deliver(messageEvent("message", { user: BOB, text: `<@${FAKE_BOT_USER_ID}> edited`, subtype: "message_changed" }));
    harness.anthropic.script(reply("hi bob"));
    const mentionTs = nextTs();
    await deliver(messageEvent("app_mention", { user: BOB, text: `<@${FAKE_BOT_USER_ID}> hi`, ts: mentionTs }));
    await harness.settle("handleMessage", 1);
    expect(harness.posted(mentionTs).at(-1)?.params.text).toBe("hi bob");
    // Ignored events are dropped before any lookup: the only user looked up is the one who mentioned the bot.
    expect(harness.slack.callsOf("users.info").map((call) => call.params.user)).toEqual([BOB]);
    expect(harness.engineCalls).toHaveLength(1);
    expect(harness.anthropic.requests).toHaveLength(1);
  });

  it("waits out a 429 with Retry-After instead of dropping the card", async () => {
    harness.anthropic.script(ask({ type: "confirm", question: "Proceed?" }));
    harness.slack.rateLimit("chat.postMessage", 2);
    const ts = nextTs();
    await deliver(messageEvent("app_mention", { user: ALICE, text: `<@${FAKE_BOT_USER_ID}> go`, ts }));
    await harness.settle("handleMessage", 1);
    expect(harness.slack.calls.filter((call) => call.error === "ratelimited")).toHaveLength(2);
    expect(harness.card(ts).text).toContain("Proceed?");
  });

  it("splits a long final answer into several messages, shows progress and clears the thinking status", async () => {
    const paragraphs = Array.from({ length: 60 }, (_, index) => `Paragraph ${index}: ${"detail ".repeat(60)}`);
    // A step that takes over a second shows "is thinking…"; a quicker one shows nothing busy at all.
    harness.anthropic.script({ content: [text(paragraphs.join("\n\n"))], stopReason: "end_turn", delayMs: 1500 });
    const ts = nextTs();
    await deliver(messageEvent("app_mention", { user: ALICE, text: `<@${FAKE_BOT_USER_ID}> explain`, ts }));
    await harness.settle("handleMessage", 1);
    const answers = harness.drawn(ts).filter((message) => JSON.stringify(message.params.blocks ?? "").includes('"type":"markdown"'));
    const texts = answers.map((call) => (call.params.blocks as Array<{ text: string }>)[0]!.text);
    expect(texts.length).toBeGreaterThan(2);
    expect(texts.every((text) => text.length <= 12000)).toBe(true);
    expect(answers.every((call) => String(call.params.text).length <= 4000)).toBe(true);
    expect(texts.join("\n\n")).toContain("Paragraph 0:");
    expect(texts.join("\n\n")).toContain("Paragraph 59:");
    const statuses = harness.slack.callsOf("assistant.threads.setStatus").map((call) => call.params.status);
    expect(statuses).toEqual(["is thinking…", ""]);
    // The status line became the answer's first part: no Stop button and no "Thinking…" left in the thread.
    const drawn = harness.drawn(ts);
    expect(drawn).toHaveLength(texts.length);
    expect(drawn.filter((message) => /stop:|⏳/.test(JSON.stringify(message.params)))).toEqual([]);
  });

  it("answers /healthz when the database answers and /readyz when Slack is connected too, on its own listener", async () => {
    const get = async (path: string) => {
      const response = await fetch(`http://127.0.0.1:${harness.adapter.port}${path}`);
      return { status: response.status, body: await response.json() };
    };
    expect(await get("/healthz")).toEqual({ status: 200, body: { ok: true, checks: { database: "ok" } } });
    expect(await get("/readyz")).toEqual({ status: 200, body: { ok: true, checks: { database: "ok", slack: "ok" } } });
    // A database that no longer answers fails both: the orchestrator restarts the process.
    await harness.store.close();
    const down = await get("/healthz");
    expect(down.status).toBe(503);
    expect(down.body.ok).toBe(false);
    expect(down.body.checks.database).not.toBe("ok");
    expect((await get("/readyz")).status).toBe(503);
  });
});
