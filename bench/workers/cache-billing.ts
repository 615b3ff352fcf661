import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { AnthropicModelClient } from "../../adapters/anthropic/anthropic-model-client.js";
import { SqliteSessionStore } from "../../db/sqlite-session-store.js";
import { Engine } from "../../src/engine/engine.js";
import { SILENT_LOGGER } from "../../src/logger.js";
import { defineTool } from "../../src/loop/tools.js";
import type { ModelClient } from "../../src/ports/model-client.js";
import {
  estimateTokens,
  FakeAnthropic,
  type FakeUsage,
  type RequestBilling,
  reply,
  type ScriptedTurn,
  toolUse,
} from "../../test/fakes/fake-anthropic.js";
import { RecordingAdapter } from "../../test/fakes/recording-adapter.js";

// What the prompt cache bills the request after a person's answer, with and without the core's choice of ttl.
// One thread through the real engine, SDK and adapter, against the fake Messages API keeping its prompt cache as
// the API does (test/fakes/fake-anthropic.ts: 4 characters a token, 5-minute and 1-hour entries, the multipliers).
// The first turn reads log files until the history is about `historyTokens` long; then a second turn either asks
// (and is answered N minutes later) or just answers. "without" sends every request with the API's
// default 5 minutes, as Parley did before; "with" lets src/loop/cache-ttl.ts choose.
// Billed = input + 1.25 × 5-minute writes + 2 × 1-hour writes + 0.1 × reads, in base input tokens.
const historyTokens = Number(process.argv[2] ?? 20_000);
const answerMinutes = (process.argv[3] ?? "1,10,60,61").split(",").map(Number);
const MINUTE = 60_000;
const conversation = { platform: "slack" as const, workspace: "T", channel: "C", thread: "bench" };
const person = { id: "U_OWNER", name: "alice" };

const readFile = defineTool({
  name: "read_file",
  description: "Reads a file of the repository.",
  hints: { readOnly: true },
  input: z.object({ path: z.string() }),
  // 200 lines of 50 characters: about 2,550 tokens as the request carries it (JSON-escaped).
  run: ({ path }) => `${path}\n${"2026-11-29T12:00:00Z INFO request served in 12 ms\n".repeat(200)}`,
});

/** The second turn comes `afterMinutes` after the first, and either asks (answered later) or just answers. */
type Ending = { kind: "ask"; afterMinutes: number; answerAfterMinutes: number } | { kind: "reply"; afterMinutes: number };

interface Measured {
  /** The second turn's requests, each as billed. */
  turn: RequestBilling[];
  /** All the input tokens of the second turn's first request: the history it was sent with. */
  historyTokens: number;
  /** What the first turn (the log reads) was billed in all. */
  firstTurnBilled: number;
}

async function thread(choice: boolean, files: number, ending: Ending): Promise<Measured> {
  const fake = await new FakeAnthropic().start();
  const directory = mkdtempSync(join(tmpdir(), "parley-cache-"));
  let now = Date.UTC(2026, 10, 29, 12);
  fake.enablePromptCache({ now: () => now });
  const client = new AnthropicModelClient({ apiKey: "bench", model: "claude-sonnet-5-5", baseURL: fake.url, maxRetries: 0 });
  const model: ModelClient = choice
    ? client
    : { createMessage: (request, signal) => client.createMessage({ ...request, cacheTtl: "5m" }, signal) };
  const adapter = new RecordingAdapter();
  const store = new SqliteSessionStore(join(directory, "cache.db"));
  const engine = new Engine({ store, model, adapters: [adapter], logger: SILENT_LOGGER, tools: [readFile], clock: () => now });
  let events = 0;
  const say = async (text: string) => {
    await engine.handleMessage({ eventId: `E${++events}`, conversation, author: person, text, addressedToBot: true });
    await engine.idle();
  };
  try {
    const reads: ScriptedTurn[] = Array.from({ length: files }, (_, index) => ({
      // Fixed ids: every thread's history is the same, token for token.
      content: [toolUse("read_file", { path: `logs/service-${index}.log` }, `toolu_read_${index}`)],
      stopReason: "tool_use",
    }));
    fake.script(...reads, reply("I read the logs: nothing alarming, two slow queries in service-3."));
    await say("read the service logs and tell me if anything looks wrong");
    const firstTurn = fake.billing.length;
    now += ending.afterMinutes * MINUTE;
    if (ending.kind === "ask") {
      const deploy = toolUse("ask_user", { type: "confirm", question: "Deploy build 4812 to production now?" }, "toolu_ask");
      fake.script({ content: [deploy], stopReason: "tool_use" }, reply("Deployed build 4812."));
      await say("then deploy the new build, if you think it is safe");
      now += ending.answerAfterMinutes * MINUTE;
      await engine.answer(adapter.cards.at(-1)!.askId, person, { kind: "option", index: 0 });
      await engine.idle();
    } else {
      fake.script(reply("The two slow queries both read the orders table without its index."));
      await say("what were the slow queries about?");
    }
    const turn = fake.billing.slice(firstTurn);
    const firstTurnBilled = fake.billing.slice(0, firstTurn).reduce((sum, request) => sum + request.billed, 0);
    return { turn, historyTokens: promptTokens(turn[0]!.usage), firstTurnBilled };
  } finally {
    await engine.close();
    await store.close();
    await fake.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

function promptTokens(usage: FakeUsage): number {
  return usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens;
}

const describeUsage = (usage: FakeUsage) => ({
  read: usage.cache_read_input_tokens,
  write5m: usage.cache_creation?.ephemeral_5m_input_tokens ?? 0,
  write1h: usage.cache_creation?.ephemeral_1h_input_tokens ?? 0,
  uncached: usage.input_tokens,
});

// Parley's own prompt and tools are about 1,300 tokens: log files make up the rest.
const probe = await thread(false, 0, { kind: "reply", afterMinutes: 1 });
const fileTokens = estimateTokens(JSON.stringify(await readFile.run({ path: "logs/service-0.log" })));
const files = Math.max(0, Math.round((historyTokens - probe.historyTokens) / fileTokens));

async function askTurn(afterMinutes: number, answerAfterMinutes: number) {
  const row: Record<string, unknown> = { afterMinutes, answerAfterMinutes };
  for (const choice of [false, true]) {
    const { turn, historyTokens: history } = await thread(choice, files, { kind: "ask", afterMinutes, answerAfterMinutes });
    const [asking, resume] = turn as [RequestBilling, RequestBilling];
    row[choice ? "with" : "without"] = {
      history,
      asking: { billed: asking.billed, ...describeUsage(asking.usage) },
      resume: { billed: resume.billed, ...describeUsage(resume.usage) },
    };
  }
  return row;
}

// The ask comes a minute after the turn that read the logs: the history is cached when it is sent.
const resumes = [];
for (const minutes of answerMinutes) resumes.push(await askTurn(1, minutes));
// The ask is the first request after two quiet hours: it writes the whole history, and so keeps five minutes.
const coldAsk = await askTurn(120, 10);

// Turns that end without asking: the one that read the logs (one request per file, and the answer), and a next
// message a minute or two hours later, answered at once.
const replies = [];
const firstTurn: Record<string, number> = {};
for (const afterMinutes of [1, 120]) {
  const row: Record<string, unknown> = { afterMinutes };
  for (const choice of [false, true]) {
    const measured = await thread(choice, files, { kind: "reply", afterMinutes });
    row[choice ? "with" : "without"] = {
      history: measured.historyTokens,
      billed: measured.turn.reduce((sum, request) => sum + request.billed, 0),
    };
    firstTurn[choice ? "with" : "without"] = measured.firstTurnBilled;
  }
  replies.push(row);
}

process.stdout.write(`${JSON.stringify({ files, resumes, coldAsk, firstTurn, replies })}\n`);
