import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { AnthropicModelClient } from "../../adapters/anthropic/anthropic-model-client.js";
import { SqliteSessionStore } from "../../db/sqlite-session-store.js";
import { Engine } from "../../src/engine/engine.js";
import { SILENT_LOGGER } from "../../src/logger.js";
import { defineTool } from "../../src/loop/tools.js";
import type { CacheTtl, ModelClient, ModelRequest } from "../../src/ports/model-client.js";
import {
  ask,
  billedInputTokens,
  FakeAnthropic,
  type FakeUsage,
  type RecordedRequest,
  type RequestBilling,
  reply,
  type ScriptedTurn,
  toolUse,
} from "../fakes/fake-anthropic.js";
import { RecordingAdapter } from "../fakes/recording-adapter.js";
import { CONVERSATION, EngineHarness, OWNER, tempDatabasePath } from "../support/harness.js";

const START = Date.UTC(2026, 10, 29, 12);
const MINUTE = 60_000;

/** Every cache_control of a request, in the prompt's order: tools, then system, then messages. */
function breakpoints(body: RecordedRequest["body"]): Array<{ at: string; control: unknown }> {
  const found: Array<{ at: string; control: unknown }> = [];
  for (const [index, tool] of (body.tools ?? []).entries())
    if (tool.cache_control) found.push({ at: `tools[${index}]`, control: tool.cache_control });
  for (const [index, block] of ((body.system ?? []) as Array<{ cache_control?: unknown }>).entries())
    if (block.cache_control) found.push({ at: `system[${index}]`, control: block.cache_control });
  for (const [index, message] of body.messages.entries()) {
    if (typeof message.content === "string") continue;
    for (const [position, block] of message.content.entries())
      if (block.cache_control) found.push({ at: `messages[${index}].content[${position}]`, control: block.cache_control });
  }
  return found;
}

const ttls = (request: RecordedRequest | undefined) =>
  breakpoints(request!.body).map(({ control }) => (control as { ttl?: string }).ttl ?? "5m");

describe("the adapter's breakpoints", () => {
  let fake: FakeAnthropic;
  beforeEach(async () => {
    fake = await new FakeAnthropic().start();
  });
  afterEach(async () => {
    await fake.close();
  });

  const client = () => new AnthropicModelClient({ apiKey: "test-key", model: "claude-sonnet-5-5", baseURL: fake.url, maxRetries: 0 });
  const request = (cacheTtl?: CacheTtl): ModelRequest => ({
    system: "You are a test.",
    tools: [
      { name: "first", description: "One.", inputSchema: { type: "object" } },
      { name: "second", description: "Two.", inputSchema: { type: "object" } },
    ],
    messages: [
      { role: "user", content: [{ type: "text", text: "hello" }] },
      { role: "assistant", content: [{ type: "text", text: "hi" }] },
      {
        role: "user",
        content: [
          { type: "text", text: "one" },
          { type: "text", text: "two" },
        ],
      },
    ],
    maxTokens: 100,
    ...(cacheTtl ? { cacheTtl } : {}),
  });

  it('puts ttl "1h" on the last tool, the system prompt and the newest block, in that order, when the core asks for it', async () => {
    fake.script(reply("ok"));
    await client().createMessage(request("1h"));
    expect(breakpoints(fake.requests[0]!.body)).toEqual([
      { at: "tools[1]", control: { type: "ephemeral", ttl: "1h" } },
      { at: "system[0]", control: { type: "ephemeral", ttl: "1h" } },
      { at: "messages[2].content[1]", control: { type: "ephemeral", ttl: "1h" } },
    ]);
  });

  it("sends the API's default breakpoints, with no ttl, for 5m and when the core says nothing", async () => {
    fake.script(reply("ok"), reply("ok"));
    await client().createMessage(request("5m"));
    await client().createMessage(request());
    for (const sent of fake.requests) {
      expect(breakpoints(sent.body)).toEqual([
        { at: "tools[1]", control: { type: "ephemeral" } },
        { at: "system[0]", control: { type: "ephemeral" } },
        { at: "messages[2].content[1]", control: { type: "ephemeral" } },
      ]);
    }
  });

  it("the fake refuses a 1-hour breakpoint after a 5-minute one, as the API does", async () => {
    const body = {
      model: "m",
      max_tokens: 10,
      tools: [{ name: "t", description: "d", input_schema: { type: "object" }, cache_control: { type: "ephemeral" } }],
      system: [{ type: "text", text: "s", cache_control: { type: "ephemeral", ttl: "1h" } }],
      messages: [{ role: "user", content: "hi" }],
    };
    const response = await fetch(`${fake.url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": "k", "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toContain("invalid_request_error");
  });
});

describe("the core's choice of ttl", () => {
  let fake: FakeAnthropic;
  let database: ReturnType<typeof tempDatabasePath>;
  let harness: EngineHarness | undefined;
  let now: number;

  beforeEach(async () => {
    now = START;
    fake = await new FakeAnthropic().start();
    database = tempDatabasePath();
  });
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
    await fake.close();
    database.cleanup();
  });

  const open = (options: ConstructorParameters<typeof EngineHarness>[2] = {}) =>
    (harness = new EngineHarness(fake, database.path, { clock: () => now, ...options }));

  const changer = defineTool({
    name: "restart_service",
    description: "Restarts a service.",
    input: z.object({}),
    run: () => "restarted",
  });

  /** Two turns a minute apart: the first request of a session has nothing cached yet, the second has. */
  const twoTurns = async (bot: EngineHarness) => {
    fake.script(reply("Hi."), reply("Hi again."));
    await bot.say("hello");
    now += MINUTE;
    await bot.say("hello again");
  };

  it('asks for "1h" on every breakpoint when the request may end in an ask and its history is cached', async () => {
    await twoTurns(open());
    // The session's first request writes everything anyway: it keeps the default.
    expect(ttls(fake.requests[0])).toEqual(["5m", "5m", "5m"]);
    expect(ttls(fake.requests[1])).toEqual(["1h", "1h", "1h"]);
  });

  it("keeps the default five minutes when no ask and no approval can come of the request", async () => {
    await twoTurns(open({ settings: { maxAskPerTurn: 0 } }));
    // No tools are offered at all: the breakpoints are the system prompt's and the message's.
    expect(ttls(fake.requests[1])).toEqual(["5m", "5m"]);
  });

  it("keeps the default five minutes when every ask times out within four minutes", async () => {
    await twoTurns(open({ settings: { askTimeoutSeconds: 120 } }));
    expect(ttls(fake.requests[1])).toEqual(["5m", "5m", "5m"]);
  });

  it('asks for "1h" when an offered tool needs a person\'s approval, even with ask_user off', async () => {
    await twoTurns(open({ settings: { maxAskPerTurn: 0 }, tools: [changer] }));
    expect(ttls(fake.requests[1])).toEqual(["1h", "1h", "1h"]);
  });

  it("keeps five minutes for the request that carries a large tool result, then the hour again", async () => {
    const dump = defineTool({
      name: "dump",
      description: "Returns a large file.",
      hints: { readOnly: true },
      input: z.object({}),
      run: () => "x".repeat(40_000),
    });
    const clock = defineTool({
      name: "clock",
      description: "The time.",
      hints: { readOnly: true },
      input: z.object({}),
      run: () => "noon",
    });
    const bot = open({ tools: [dump, clock] });
    fake.script(reply("Hi."), { content: [toolUse("dump", {})] }, { content: [toolUse("clock", {})] }, reply("Done."));
    await bot.say("hello");
    now += MINUTE;
    await bot.say("read the dump, then the time");
    // 10,000 new tokens of 11,000 and more: far over a tenth of the prompt.
    expect([1, 2, 3].map((index) => ttls(fake.requests[index])[0])).toEqual(["1h", "5m", "1h"]);
  });

  it("goes back to five minutes once the history has left the cache", async () => {
    const bot = open();
    await twoTurns(bot);
    now += 60 * MINUTE + 1;
    fake.script(reply("Back."));
    await bot.say("still there?");
    expect(ttls(fake.requests[2])).toEqual(["5m", "5m", "5m"]);
  });

  it("drops to five minutes once the turn's asks are spent, and the resume still reads the hour-long prefix", async () => {
    fake.enablePromptCache({ now: () => now });
    const bot = open({ settings: { maxAskPerTurn: 1 } });
    fake.script(reply("Hi."), ask({ type: "confirm", question: "Go on?" }), reply("Done."));
    await bot.say("hello");
    now += MINUTE;
    await bot.say("do it");
    now += 10 * MINUTE;
    await bot.engine.answer(bot.lastCard().askId, OWNER, { kind: "option", index: 0 });
    await bot.engine.idle();
    expect(ttls(fake.requests[1])).toEqual(["1h", "1h", "1h"]);
    expect(ttls(fake.requests[2])).toEqual(["5m", "5m", "5m"]);
    const [, asking, resume] = fake.billing;
    expect(resume!.usage.cache_read_input_tokens).toBe(promptTokens(asking!.usage));
  });
});

/** All of a request's input tokens, however billed. */
function promptTokens(usage: FakeUsage): number {
  return usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens;
}

/** A log file of about 2,300 tokens: three of them and Parley's own prompt make a history of about 8,000. */
const readFile = defineTool({
  name: "read_file",
  description: "Reads a file of the repository.",
  hints: { readOnly: true },
  input: z.object({ path: z.string() }),
  run: ({ path }) => `${path}\n${"2026-11-29T12:00:00Z INFO request served in 12 ms\n".repeat(180)}`,
});

const read = (path: string): ScriptedTurn => ({ content: [toolUse("read_file", { path })], stopReason: "tool_use" });

/**
 * One thread through the real engine, SDK and adapter, billed by the fake's prompt cache: a turn reads three logs,
 * a minute later the next turn asks, and the person answers `minutes` after the card went up. `choice: false` plays
 * the code before this change: every request with the API's default five minutes.
 */
async function resumeAfter(minutes: number, choice: boolean): Promise<{ asking: RequestBilling; resume: RequestBilling }> {
  const fake = await new FakeAnthropic().start();
  const database = tempDatabasePath();
  let now = START;
  fake.enablePromptCache({ now: () => now });
  const client = new AnthropicModelClient({ apiKey: "test-key", model: "claude-sonnet-5-5", baseURL: fake.url, maxRetries: 0 });
  const model: ModelClient = choice
    ? client
    : { createMessage: (request, signal) => client.createMessage({ ...request, cacheTtl: "5m" }, signal) };
  const adapter = new RecordingAdapter();
  const store = new SqliteSessionStore(database.path);
  const engine = new Engine({ store, model, adapters: [adapter], logger: SILENT_LOGGER, tools: [readFile], clock: () => now });
  const say = async (eventId: string, text: string) => {
    await engine.handleMessage({ eventId, conversation: CONVERSATION, author: OWNER, text, addressedToBot: true });
    await engine.idle();
  };
  try {
    fake.script(
      read("api.log"),
      read("worker.log"),
      read("db.log"),
      reply("Nothing alarming."),
      ask({ type: "confirm", question: "Deploy?" }),
    );
    fake.script(reply("Deployed."));
    await say("E1", "read the logs");
    now += MINUTE;
    await say("E2", "deploy if they look fine");
    now += minutes * MINUTE;
    await engine.answer(adapter.cards.at(-1)!.askId, OWNER, { kind: "option", index: 0 });
    await engine.idle();
    expect(fake.billing).toHaveLength(6);
    const [asking, resume] = fake.billing.slice(-2) as [RequestBilling, RequestBilling];
    return { asking, resume };
  } finally {
    await engine.close();
    await store.close();
    await fake.close();
    database.cleanup();
  }
}

describe("what a resume is billed, answered 1, 10 and 60 minutes after the ask", () => {
  it("reads the history in every case with the choice", async () => {
    for (const minutes of [1, 10, 60]) {
      const { asking, resume } = await resumeAfter(minutes, true);
      expect(promptTokens(asking.usage)).toBeGreaterThan(8000);
      // All of the asking request's prompt is read; only the ask and its answer are new.
      expect(resume.usage.cache_read_input_tokens).toBe(promptTokens(asking.usage));
      expect(resume.usage.cache_creation!.ephemeral_1h_input_tokens).toBe(resume.usage.cache_creation_input_tokens);
      expect(resume.usage.cache_creation_input_tokens).toBeLessThan(200);
      expect(resume.billed).toBeLessThan(0.15 * promptTokens(resume.usage));
    }
  });

  it("without it, reads after 1 minute but writes the whole history again after 10 and 60", async () => {
    const quick = (await resumeAfter(1, false)).resume;
    expect(quick.usage.cache_read_input_tokens).toBeGreaterThan(8000);
    for (const minutes of [10, 60]) {
      const { resume } = await resumeAfter(minutes, false);
      expect(resume.usage).toMatchObject({ cache_read_input_tokens: 0, input_tokens: 0 });
      expect(resume.usage.cache_creation).toEqual({ ephemeral_5m_input_tokens: promptTokens(resume.usage), ephemeral_1h_input_tokens: 0 });
      expect(resume.billed).toBe(billedInputTokens(resume.usage));
      expect(resume.billed).toBe(1.25 * promptTokens(resume.usage));
    }
  });

  it("the hour is the limit: past it, both write the history again, at the same five-minute price", async () => {
    const late = await resumeAfter(61, true);
    const before = await resumeAfter(61, false);
    expect(late.resume.usage.cache_read_input_tokens).toBe(0);
    expect(late.resume.usage.cache_creation!.ephemeral_5m_input_tokens).toBe(promptTokens(late.resume.usage));
    expect(late.resume.billed).toBe(before.resume.billed);
  });
});
