import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ModelRetryPolicy } from "../../src/loop/call-model.js";
import { renderRichText } from "../../src/ports/rich-text.js";
import { ask, FakeAnthropic, reply, type ScriptedTurn, text } from "../fakes/fake-anthropic.js";
import { RECORDED_DIALECT } from "../fakes/recording-adapter.js";
import { LogCapture } from "../support/capture.js";
import { CONVERSATION, EngineHarness, OWNER, tempDatabasePath } from "../support/harness.js";

let fake: FakeAnthropic;
let database: ReturnType<typeof tempDatabasePath>;
let harness: EngineHarness;
let logs: LogCapture;
let now: number;
/** Every backoff slice the loop slept, in ms; the fake sleep moves the clock on instead of waiting. */
let slept: number[];

const instantSleep: ModelRetryPolicy["sleep"] = async (ms) => {
  slept.push(ms);
  now += ms;
};

function start(modelRetry: Partial<ModelRetryPolicy>, sdkMaxRetries = 0) {
  harness = new EngineHarness(fake, database.path, {
    clock: () => now,
    logger: logs.logger,
    sdkMaxRetries,
    // No jitter: the schedule is exactly 5, 10, 20, 40, 60 … s.
    modelRetry: { maxWaitMs: 300_000, sleep: instantSleep, random: () => 0.5, ...modelRetry },
  });
}

beforeEach(async () => {
  now = Date.UTC(2026, 11, 1, 12);
  slept = [];
  logs = new LogCapture();
  fake = await new FakeAnthropic().start();
  database = tempDatabasePath();
});

afterEach(async () => {
  await harness.close();
  await fake.close();
  database.cleanup();
});

const statusTexts = () => harness.adapter.progress.map((view) => renderRichText(view.text, RECORDED_DIALECT));
const threadTexts = () => harness.adapter.messages.map((message) => message.text);
const times = (count: number, turn: ScriptedTurn) => Array.from({ length: count }, () => turn);

async function storedAssistantMessages() {
  const session = await harness.store.findSession(CONVERSATION);
  const messages = await harness.store.loadMessages(session!.id);
  return { session: session!, assistant: messages.filter((message) => message.role === "assistant") };
}

describe("a busy model is waited out", () => {
  it("529 three times, then an answer: the turn completes, the answer shows once, the status said busy", async () => {
    start({});
    fake.script(...times(3, { status: 529, error: "Overloaded" }), reply("The answer is 42."));
    await harness.say("what is the answer?");

    expect(fake.requests).toHaveLength(4);
    expect(threadTexts()).toEqual(["The answer is 42."]);
    expect(statusTexts()).toEqual(
      expect.arrayContaining([
        "Claude is busy (overloaded, 529); retrying in 5 s (attempt 2)",
        "Claude is busy (overloaded, 529); retrying in 10 s (attempt 3)",
        "Claude is busy (overloaded, 529); retrying in 20 s (attempt 4)",
      ]),
    );
    // The answer takes the status line's place (edited into it), so no "Done" edit is sent after it.
    expect(harness.adapter.progress.at(-1)).toMatchObject({ done: false });
    expect(harness.adapter.messages.at(-1)?.options?.inPlaceOf).toBe(harness.adapter.progress.at(-1)?.turnKey);
    expect(slept.reduce((sum, ms) => sum + ms, 0)).toBe(35_000);
    // Each retry sends the same history: the failed attempts left nothing behind.
    expect(fake.requests.map((request) => request.body.messages.length)).toEqual([1, 1, 1, 1]);
    const { session, assistant } = await storedAssistantMessages();
    expect(assistant).toHaveLength(1);
    expect(session.status).toBe("idle");
    expect(session.usage.inputTokens).toBe(100);
    expect(session.usage.outputTokens).toBe(20);
  });

  it("with the SDK's own two retries (as in production), three 529s cost one wait and the turn completes", async () => {
    start({}, 2);
    fake.script(...times(3, { status: 529, error: "Overloaded" }), reply("The answer is 42."));
    await harness.say("what is the answer?");

    expect(fake.requests).toHaveLength(4);
    expect(statusTexts().filter((status) => status.startsWith("Claude is busy"))).toEqual([
      "Claude is busy (overloaded, 529); retrying in 5 s (attempt 2)",
    ]);
    expect(threadTexts()).toEqual(["The answer is 42."]);
  });

  it("a model call retried after an answer sends the answer once and stores each message once", async () => {
    start({});
    fake.script(ask({ type: "confirm", question: "Deploy?" }), ...times(2, { status: 500 }), reply("Deployed."));
    await harness.say("deploy");
    expect(await harness.engine.answer(harness.lastCard().askId, OWNER, { kind: "option", index: 0 })).toEqual({ kind: "accepted" });
    await harness.engine.idle();

    expect(fake.requests).toHaveLength(4);
    // The three calls after the answer send the same history: the question, the ask and its one result.
    expect(fake.requests.slice(1).map((request) => request.body.messages.length)).toEqual([3, 3, 3]);
    expect(threadTexts()).toEqual(["Deployed."]);
    const session = await harness.store.findSession(CONVERSATION);
    const stored = await harness.store.loadMessages(session!.id);
    expect(stored.map((message) => message.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(session!.usage.inputTokens).toBe(200);
  });

  it("a 429 with retry-after waits what the API asked for", async () => {
    start({});
    fake.script({ status: 429, error: "Slow down", headers: { "retry-after": "17" } }, reply("Done waiting."));
    await harness.say("hello");

    expect(fake.requests).toHaveLength(2);
    expect(statusTexts()).toContain("Claude is busy (rate limited, 429); retrying in 17 s (attempt 2)");
    expect(slept.reduce((sum, ms) => sum + ms, 0)).toBe(17_000);
    expect(threadTexts()).toEqual(["Done waiting."]);
  });

  it("a connection reset in the middle of the SSE stream is retried, and the half-streamed text never shows", async () => {
    start({});
    fake.script({ content: [text("Partial answer that never arrives whole")], streamFault: "reset" }, reply("Whole answer."));
    await harness.say("hello");

    expect(fake.requests).toHaveLength(2);
    expect(statusTexts()).toContain("Claude is busy (connection lost); retrying in 5 s (attempt 2)");
    expect(threadTexts()).toEqual(["Whole answer."]);
    expect((await storedAssistantMessages()).assistant).toHaveLength(1);
  });

  it("an overloaded error event in the middle of the stream is retried too", async () => {
    start({});
    fake.script({ content: [text("Half")], streamFault: "overloaded" }, reply("Whole answer."));
    await harness.say("hello");

    expect(fake.requests).toHaveLength(2);
    expect(statusTexts()).toContain("Claude is busy (overloaded_error in the stream); retrying in 5 s (attempt 2)");
    expect(threadTexts()).toEqual(["Whole answer."]);
  });

  it("a busy model past the bound fails the turn with a clear message, after a bounded number of tries", async () => {
    start({ maxWaitMs: 40_000 });
    fake.script(...times(10, { status: 503, error: "Service Unavailable" }));
    await harness.say("hello");

    // Waits of 5 + 10 + 20 s fit in 40 s; the next (40 s) would not, so the fourth failure is the last.
    expect(fake.requests).toHaveLength(4);
    expect(slept.reduce((sum, ms) => sum + ms, 0)).toBe(35_000);
    expect(threadTexts()).toEqual([
      "⚠️ This turn failed: Claude stayed busy (server error 503) through 4 attempts over 35 s, and Parley retries for at most 40 s. " +
        `Write again to retry, or an admin can run \`/parley retry ${(await harness.store.findSession(CONVERSATION))!.id}\`.`,
    ]);
    expect(statusTexts().at(-1)).toBe("Failed");
    const { session, assistant } = await storedAssistantMessages();
    expect(session.status).toBe("failed");
    expect(assistant).toHaveLength(0);
  });

  it("a retry-after longer than the bound fails at once instead of waiting past it", async () => {
    start({ maxWaitMs: 60_000 });
    fake.script({ status: 429, headers: { "retry-after": "600" } }, reply("never"));
    await harness.say("hello");

    expect(fake.requests).toHaveLength(1);
    expect(slept).toEqual([]);
    expect(threadTexts()[0]).toContain("This turn failed: Claude stayed busy (rate limited, 429), and Parley retries for at most 1 min.");
  });
});

describe("a request the API refuses fails at once", () => {
  it("a 400 fails on the first try, says so in the thread and logs the provider's reason without the key", async () => {
    start({});
    fake.script({ status: 400, error: "messages.0.content: must not be empty" }, reply("never"));
    await harness.say("hello");

    expect(fake.requests).toHaveLength(1);
    expect(slept).toEqual([]);
    expect(statusTexts().some((status) => status.includes("busy"))).toBe(false);
    expect(threadTexts()).toHaveLength(1);
    expect(threadTexts()[0]).toContain(
      "⚠️ This turn failed: the model API refused the request (400 invalid_request_error); the details are in Parley's log.",
    );
    expect((await harness.store.findSession(CONVERSATION))?.status).toBe("failed");
    const failure = logs.text
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((entry) => entry.msg === "turn-failed");
    expect(failure).toMatchObject({
      code: "model-refused",
      status: 400,
      detail: expect.stringContaining("messages.0.content: must not be empty"),
    });
    expect(logs.text).not.toContain("test-key");
  });

  it("a 401 fails on the first try", async () => {
    start({});
    fake.script({ status: 401, error: "invalid x-api-key" }, reply("never"));
    await harness.say("hello");

    expect(fake.requests).toHaveLength(1);
    expect(threadTexts()[0]).toContain("the model API refused the request (401 authentication_error)");
    expect(logs.text).not.toContain("test-key");
  });
});

describe("Stop while waiting out a busy model", () => {
  const busyShown = async () => {
    while (!statusTexts().some((status) => status.startsWith("Claude is busy"))) await new Promise((resolve) => setTimeout(resolve, 5));
  };

  it("Stop during the backoff wait ends the turn at once: no second request, no answer", async () => {
    // The real sleep, and a long wait the API asked for.
    harness = new EngineHarness(fake, database.path, { clock: () => now, logger: logs.logger, modelRetry: { maxWaitMs: 300_000 } });
    fake.script({ status: 529, headers: { "retry-after": "30" } }, reply("too late"));
    expect(await harness.engine.handleMessage(message("E1", "hello"))).toBe("started");
    await busyShown();

    const stoppedAt = performance.now();
    expect(await harness.say("stop")).toBe("stopping");
    expect(performance.now() - stoppedAt).toBeLessThan(500);
    expect(fake.requests).toHaveLength(1);
    expect(threadTexts()).toEqual(["⏹ Stopped."]);
    expect((await harness.store.findSession(CONVERSATION))?.status).toBe("idle");
  });

  it("a Stop only the store knows of (taken by another process) ends the wait within about a second", async () => {
    harness = new EngineHarness(fake, database.path, { clock: () => now, logger: logs.logger, modelRetry: { maxWaitMs: 300_000 } });
    fake.script({ status: 529, headers: { "retry-after": "30" } }, reply("too late"));
    await harness.engine.handleMessage(message("E1", "hello"));
    await busyShown();

    const stoppedAt = performance.now();
    const session = await harness.store.findSession(CONVERSATION);
    await harness.store.requestStop(session!.id);
    await harness.engine.idle();
    expect(performance.now() - stoppedAt).toBeLessThan(2500);
    expect(fake.requests).toHaveLength(1);
    expect(threadTexts()).toEqual(["⏹ Stopped."]);
  });
});

describe("Stop while the model is answering", () => {
  it("a Stop taken elsewhere while the model answers keeps the answer out of the thread", async () => {
    harness = new EngineHarness(fake, database.path, { clock: () => now, logger: logs.logger });
    // The answer comes back 300 ms in: before the turn's once-a-second look at the store's Stop flag.
    fake.script({ content: [text("Deployed to production.")], delayMs: 300 });
    await harness.engine.handleMessage(message("E1", "deploy"));
    while (fake.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const session = await harness.store.findSession(CONVERSATION);
    await harness.store.requestStop(session!.id);
    await harness.engine.idle();
    expect(threadTexts()).toEqual(["⏹ Stopped."]);
    expect((await harness.store.getSession(session!.id))?.lastOutcome).toBe("cancelled");
  });
});

describe("shutdown while waiting out a busy model", () => {
  it("close() ends the wait at once, writes nothing, and the restarted bot finishes the turn, answering once", async () => {
    harness = new EngineHarness(fake, database.path, { clock: () => now, logger: logs.logger, modelRetry: { maxWaitMs: 300_000 } });
    fake.script({ status: 529, headers: { "retry-after": "30" } });
    await harness.engine.handleMessage(message("E1", "hello"));
    while (!statusTexts().some((status) => status.startsWith("Claude is busy"))) await new Promise((resolve) => setTimeout(resolve, 5));

    const closedAt = performance.now();
    await harness.engine.close();
    expect(performance.now() - closedAt).toBeLessThan(500);
    expect(fake.requests).toHaveLength(1);
    expect(threadTexts()).toEqual([]);
    expect(harness.adapter.progress.at(-1)).toMatchObject({ done: true });
    expect(statusTexts().at(-1)).toBe("Paused: Parley is restarting, and will carry on with this turn");
    expect((await storedAssistantMessages()).session.status).toBe("running");

    fake.script(reply("Back, and here is the answer."));
    await harness.restart();
    expect(fake.requests).toHaveLength(2);
    expect(threadTexts()).toEqual(["Back, and here is the answer."]);
    const { session, assistant } = await storedAssistantMessages();
    expect(session.status).toBe("idle");
    expect(assistant).toHaveLength(1);
  });
});

function message(eventId: string, body: string) {
  return { eventId, conversation: CONVERSATION, author: OWNER, text: body, addressedToBot: true };
}
