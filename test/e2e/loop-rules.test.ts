import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../../src/loop/tools.js";
import { ask, FakeAnthropic, lastToolResults, reply, text, toolUse } from "../fakes/fake-anthropic.js";
import { CONVERSATION, EngineHarness, OWNER, tempDatabasePath } from "../support/harness.js";

let fake: FakeAnthropic;
let database: ReturnType<typeof tempDatabasePath>;
let harness: EngineHarness;
let now: number;
let toolRuns: string[];
let releaseSlowTool: (() => void) | undefined;

const tools = [
  defineTool({
    name: "lookup",
    description: "Looks a thing up.",
    hints: { readOnly: true },
    input: z.object({ key: z.string() }),
    run: ({ key }) => {
      toolRuns.push(key);
      return `value of ${key}`;
    },
  }),
  defineTool({
    name: "explode",
    description: "Always fails.",
    hints: { readOnly: true },
    input: z.object({}),
    run: () => {
      throw new Error("disk on fire");
    },
  }),
  defineTool({
    name: "slow",
    description: "Waits until released.",
    hints: { readOnly: true },
    input: z.object({}),
    run: () => new Promise<string>((resolve) => (releaseSlowTool = () => resolve("done"))),
  }),
];

function start(settings = {}) {
  harness = new EngineHarness(fake, database.path, { tools, settings, clock: () => now });
}

beforeEach(async () => {
  now = Date.UTC(2026, 10, 29, 12);
  toolRuns = [];
  releaseSlowTool = undefined;
  fake = await new FakeAnthropic().start();
  database = tempDatabasePath();
  start();
});

afterEach(async () => {
  await harness.close();
  await fake.close();
  database.cleanup();
});

const parsedResults = (index = -1) =>
  lastToolResults(fake.requests.at(index)).map((result) => ({ ...result, content: tryParse(result.content) }));
const tryParse = (content: string) => {
  try {
    return JSON.parse(content) as unknown;
  } catch {
    return content;
  }
};

describe("Cancel and timeout", () => {
  it("Cancel gives the model {ok:false, cancelled:true} and settles the card", async () => {
    fake.script(ask({ type: "confirm", question: "Drop the table?" }), reply("Left it alone."));
    await harness.say("tidy the db");
    expect(await harness.engine.cancel(harness.lastCard().askId, OWNER)).toEqual({ kind: "accepted" });
    await harness.engine.idle();
    expect(parsedResults()[0]?.content).toEqual({ ok: false, cancelled: true });
    expect(harness.adapter.settled.at(-1)?.settlement).toMatchObject({ status: "cancelled", by: OWNER.id });
  });

  it("an unanswered ask times out at its deadline with {ok:false, timeout:true}", async () => {
    fake.script(ask({ type: "input", question: "Ticket number?", timeout_s: 60 }), reply("I'll go without it."));
    await harness.say("file it");
    expect(await harness.engine.sweep()).toBe(0);
    now += 61_000;
    expect(await harness.engine.sweep()).toBe(1);
    await harness.engine.idle();
    expect(parsedResults()[0]?.content).toEqual({ ok: false, timeout: true });
    expect(harness.adapter.settled.at(-1)?.settlement.status).toBe("expired");
    expect(harness.adapter.messages.at(-1)?.text).toBe("I'll go without it.");
  });

  it("clamps a tiny timeout to 5 seconds", async () => {
    fake.script(ask({ type: "confirm", question: "Now?", timeout_s: 0.1 }));
    await harness.say("go");
    expect(harness.lastCard().deadline - now).toBe(5000);
  });
});

describe("the ask budget", () => {
  it("the 4th ask in a turn reaches nobody and its result says the budget is spent", async () => {
    fake.script(
      ask({ type: "confirm", question: "One?" }),
      ask({ type: "confirm", question: "Two?" }),
      ask({ type: "confirm", question: "Three?" }),
      ask({ type: "confirm", question: "Four?" }),
      reply("Done with what I have."),
    );
    await harness.say("interrogate me");
    for (let index = 0; index < 3; index++) {
      await harness.engine.answer(harness.lastCard().askId, OWNER, { kind: "option", index: 0 });
      await harness.engine.idle();
    }
    expect(harness.adapter.cards.map((card) => card.spec.question)).toEqual(["One?", "Two?", "Three?"]);
    expect(parsedResults()[0]?.content).toEqual({ ok: false, error: "ask_user budget exhausted: answer with what you have" });
    expect(harness.adapter.messages.at(-1)?.text).toBe("Done with what I have.");
  });

  it("a budget of 0 removes ask_user from the tools the model sees", async () => {
    await harness.close();
    start({ maxAskPerTurn: 0 });
    fake.script(reply("Sure."));
    await harness.say("hello");
    expect(fake.requests[0]?.body.tools?.map((tool) => tool.name)).toEqual(["lookup", "explode", "slow"]);
  });

  it("a new turn gets a fresh budget", async () => {
    await harness.close();
    start({ maxAskPerTurn: 1 });
    fake.script(ask({ type: "confirm", question: "A?" }), reply("ok"), ask({ type: "confirm", question: "B?" }));
    await harness.say("first");
    await harness.engine.answer(harness.lastCard().askId, OWNER, { kind: "option", index: 0 });
    await harness.engine.idle();
    await harness.say("second");
    expect(harness.lastCard().spec.question).toBe("B?");
  });
});

describe("atomicity and tool failures", () => {
  it("ask_user beside other calls: only the ask runs, every other call gets a paired skipped error", async () => {
    fake.script(
      {
        content: [
          text("Let me check."),
          toolUse("lookup", { key: "a" }, "toolu_lookup"),
          toolUse("ask_user", { type: "confirm", question: "Go?" }, "toolu_ask"),
          toolUse("ask_user", { type: "confirm", question: "Really?" }, "toolu_ask2"),
        ],
      },
      reply("Went."),
    );
    await harness.say("do it");
    expect(harness.adapter.cards).toHaveLength(1);
    await harness.engine.answer(harness.lastCard().askId, OWNER, { kind: "option", index: 0 });
    await harness.engine.idle();
    expect(toolRuns).toEqual([]);
    const results = parsedResults();
    expect(results.map((result) => result.tool_use_id).sort()).toEqual(["toolu_ask", "toolu_ask2", "toolu_lookup"]);
    expect(results.find((result) => result.tool_use_id === "toolu_ask")?.content).toEqual({ ok: true, value: true });
    for (const id of ["toolu_lookup", "toolu_ask2"]) {
      expect(results.find((result) => result.tool_use_id === id)).toMatchObject({
        is_error: true,
        content: "skipped: ask_user took precedence",
      });
    }
  });

  it("a tool that throws and an unknown tool become is_error results, and the turn goes on", async () => {
    fake.script(
      { content: [toolUse("explode", {}, "toolu_x"), toolUse("teleport", {}, "toolu_y"), toolUse("lookup", { key: "k" }, "toolu_z")] },
      reply("Recovered."),
    );
    await harness.say("try things");
    const results = parsedResults();
    expect(results[0]).toMatchObject({ tool_use_id: "toolu_x", is_error: true, content: 'tool "explode" failed: disk on fire' });
    expect(results[1]).toMatchObject({ tool_use_id: "toolu_y", is_error: true });
    expect(String(results[1]?.content)).toContain('unknown tool "teleport"');
    expect(results[2]).toMatchObject({ tool_use_id: "toolu_z", content: "value of k" });
    expect(harness.adapter.messages.at(-1)?.text).toBe("Recovered.");
  });

  it("a malformed spec gets an is_error ERROR the model can repair, and the repaired call is asked", async () => {
    fake.script(ask({ type: "select", question: "Pick one" }), ask({ type: "select", question: "Pick one", options: ["a", "b"] }));
    await harness.say("choose for me");
    const [first] = lastToolResults(fake.requests[1]);
    expect(first).toMatchObject({ is_error: true });
    expect(first?.content).toBe(
      'ERROR: ask_user: type "select" needs "options": a list of strings or {value, label}, for example ["staging", "production"].',
    );
    expect(harness.adapter.cards).toHaveLength(1);
    expect(harness.lastCard().spec.options).toHaveLength(2);
  });
});

describe("ending a turn", () => {
  it("stops at MAX_ITERATIONS and says so in the thread", async () => {
    await harness.close();
    start({ maxIterations: 2 });
    fake.script({ content: [toolUse("lookup", { key: "1" })] }, { content: [toolUse("lookup", { key: "2" })] }, reply("never reached"));
    await harness.say("loop");
    expect(fake.requests).toHaveLength(2);
    expect(harness.adapter.messages.at(-1)?.text).toContain("I stopped after 2 steps");
    expect((await harness.store.findSession(CONVERSATION))?.lastOutcome).toBe("max-iterations");
  });

  it("Stop while a tool runs ends the turn at the next iteration, with every tool_use answered", async () => {
    fake.script({ content: [toolUse("slow", {})] }, reply("never reached"));
    const started = harness.engine.handleMessage({
      eventId: "E-stop",
      conversation: CONVERSATION,
      author: OWNER,
      text: "work",
      addressedToBot: true,
    });
    expect(await started).toBe("started");
    while (!releaseSlowTool) await new Promise((resolve) => setTimeout(resolve, 5));
    const session = await harness.store.findSession(CONVERSATION);
    expect(await harness.engine.stop(session!.id, OWNER)).toBe("stopping");
    releaseSlowTool?.();
    await harness.engine.idle();
    expect(fake.requests).toHaveLength(1);
    expect(harness.adapter.messages.at(-1)?.text).toBe("⏹ Stopped.");
    expect((await harness.store.findSession(CONVERSATION))?.lastOutcome).toBe("cancelled");
  });

  it("Stop while waiting on an ask cancels the ask and ends the turn", async () => {
    fake.script(ask({ type: "confirm", question: "Ship?" }));
    await harness.say("ship it");
    expect(await harness.say("stop")).toBe("stopping");
    expect(harness.adapter.settled.at(-1)?.settlement).toMatchObject({ status: "cancelled", stopped: true });
    expect(fake.requests).toHaveLength(1);
    expect(harness.adapter.messages.at(-1)?.text).toBe(`⏹ Stopped by <@${OWNER.id}>.`);
    const session = await harness.store.findSession(CONVERSATION);
    expect(session?.status).toBe("idle");
    fake.script(reply("Hello again."));
    await harness.say("new request");
    // The stored cancelled result keeps the history valid; the new message rides in the same user turn.
    expect(parsedResults()[0]?.content).toEqual({ ok: false, cancelled: true });
    expect(JSON.stringify(fake.requests.at(-1)?.body.messages.at(-1))).toContain("new request");
    expect(harness.adapter.messages.at(-1)?.text).toBe("Hello again.");
  });

  it("'Please stop.' to the bot stops while a question waits, instead of becoming its free-text answer", async () => {
    fake.script(ask({ type: "input", question: "Which branch?" }));
    await harness.say("ship it");
    expect(await harness.say("Please stop.")).toBe("stopping");
    expect(harness.adapter.settled.at(-1)?.settlement).toMatchObject({ status: "cancelled", stopped: true });
    expect(fake.requests).toHaveLength(1);
    // Not addressed to the bot, the same words are an ordinary answer.
    fake.script(ask({ type: "input", question: "Which branch?" }), reply("Shipping main."));
    await harness.say("ship it again");
    expect(await harness.say("please stop", { addressedToBot: false })).toBe("answered");
  });

  it("a provider failure with retrying off fails the turn visibly, and retry re-runs it", async () => {
    fake.script({ status: 529, error: "Overloaded" });
    await harness.say("summarise");
    expect(harness.adapter.messages.at(-1)?.text).toContain(
      "This turn failed: Claude is busy (overloaded, 529) and retrying is off (MODEL_RETRY_MAX_S is 0)",
    );
    const session = await harness.store.findSession(CONVERSATION);
    expect(session?.status).toBe("failed");
    fake.script(reply("Summary."));
    expect(await harness.engine.retry(session!.id)).toBe(true);
    await harness.engine.idle();
    expect(harness.adapter.messages.at(-1)?.text).toBe("Summary.");
    expect(fake.requests.at(-1)?.body.messages.at(-1)).toMatchObject({ role: "user" });
  });

  it("messages sent while a turn runs are queued and start the next turn", async () => {
    fake.script({ content: [toolUse("slow", {})] }, reply("First done."), reply("Second done."));
    await harness.engine.handleMessage({ eventId: "E1", conversation: CONVERSATION, author: OWNER, text: "one", addressedToBot: true });
    while (!releaseSlowTool) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(
      await harness.engine.handleMessage({ eventId: "E2", conversation: CONVERSATION, author: OWNER, text: "two", addressedToBot: false }),
    ).toBe("queued");
    releaseSlowTool?.();
    await harness.engine.idle();
    expect(harness.adapter.messages.map((message) => message.text)).toEqual(["First done.", "Second done."]);
    const lastUser = fake.requests.at(-1)?.body.messages.at(-1);
    expect(JSON.stringify(lastUser)).toContain("two");
  });
});

describe("the interrupt", () => {
  it("a suspended turn returns the INTERRUPT payload with the ask id, question, candidates and spec", async () => {
    const results = harness.turnResults;
    fake.script(ask({ question: "Which region?", candidates: ["eu", "us"] }));
    await harness.say("deploy");
    const card = harness.lastCard();
    expect(results).toEqual([
      {
        outcome: "suspended",
        ask: expect.objectContaining({ id: card.askId, status: "pending" }),
        interrupt: {
          status: "INTERRUPT",
          intent: "HUMAN_INTERVENTION",
          data: { ask_id: card.askId, question: "Which region?", candidates: ["eu", "us"], spec: card.spec },
        },
      },
    ]);
  });
});

describe("what the model is sent", () => {
  it("puts cache breakpoints on the system prompt and the tools, and records token usage", async () => {
    fake.script(reply("Hi."));
    await harness.say("hello");
    const body = fake.requests[0]!.body;
    expect(JSON.stringify(body.system)).toContain('"cache_control":{"type":"ephemeral"}');
    expect(body.tools?.at(-1)?.cache_control).toEqual({ type: "ephemeral" });
    expect(JSON.stringify(body.system)).toContain("Never ask for passwords");
    const session = await harness.store.findSession(CONVERSATION);
    expect(session?.usage).toEqual({ inputTokens: 100, outputTokens: 20, cacheReadTokens: 80, cacheWriteTokens: 0 });
  });

  it("tells the model who wrote each message", async () => {
    fake.script(reply("Hi."));
    await harness.say("hello");
    expect(JSON.stringify(fake.requests[0]?.body.messages[0])).toContain("[alice (U_OWNER)] hello");
  });
});
