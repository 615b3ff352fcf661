import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { arch, cpus, totalmem } from "node:os";
import { parseArgs } from "node:util";
import type { ThroughputResult } from "./workload.js";

// `npm run bench [-- --quick] [--sessions N] [--langgraph-sessions N] [--histories 0,20,200,500]
//   [--memory 1000,10000,100000] [--acks 500] [--rounds 300] [--mcp-calls 1000] [--api-asks 1000] [--api-rate 50]
//   [--api-concurrency 16] [--out bench/RESULTS.md]`
const { values: flags } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    sessions: { type: "string" },
    "langgraph-sessions": { type: "string" },
    histories: { type: "string" },
    memory: { type: "string" },
    acks: { type: "string" },
    rounds: { type: "string" },
    "mcp-calls": { type: "string" },
    "api-asks": { type: "string" },
    "api-rate": { type: "string" },
    "api-concurrency": { type: "string" },
    out: { type: "string" },
  },
});
const quick = flags.quick ?? false;
const sessions = Number(flags.sessions ?? (quick ? 50 : 1000));
const histories = (flags.histories ?? "0,20,200,500").split(",").map(Number);
const langgraphSessions = (history: number) =>
  Number(flags["langgraph-sessions"] ?? (quick ? 10 : history >= 500 ? 50 : history >= 200 ? 100 : 200));
const memoryPoints = flags.memory ?? (quick ? "500,1000,2000" : "1000,10000,100000");
const throughputRuns = quick ? 1 : 3;
const acks = Number(flags.acks ?? (quick ? 50 : 500));
const rounds = Number(flags.rounds ?? (quick ? 30 : 300));
const mcpCalls = Number(flags["mcp-calls"] ?? (quick ? 100 : 1000));
const apiAsks = Number(flags["api-asks"] ?? (quick ? 100 : 1000));
const apiRate = Number(flags["api-rate"] ?? 50);
const apiConcurrency = Number(flags["api-concurrency"] ?? 16);

function worker(script: string, args: Array<string | number>, nodeFlags: string[] = []): string {
  const output = execFileSync(process.execPath, [...nodeFlags, "--import", "tsx", `bench/workers/${script}.ts`, ...args.map(String)], {
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024,
  });
  return output.trim().split("\n").at(-1) ?? "";
}

const log = (text: string) => process.stderr.write(`${text}\n`);
/** What went wrong in a worker, in one line: the first error its stderr names, else the message's first line. */
const failure = (error: unknown) => {
  const stderr = (error as { stderr?: unknown }).stderr;
  const text = typeof stderr === "string" ? stderr : "";
  const named = text.split("\n").find((line) => /^\w*Error\b/.test(line));
  // A ZodError prints its issues as JSON on the lines after its name: the first issue's message says what.
  const issue = named && /[[{]\s*$/.test(named) ? /"message": "([^"]*)"/.exec(text)?.[1] : undefined;
  if (named) return issue ? `${named.replace(/:\s*[[{]\s*$/, "")}: ${issue}` : named.trim();
  return error instanceof Error ? (error.message.split("\n")[0] ?? "") : String(error);
};
const format = (value: number, digits = 0) =>
  value.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
const lines: string[] = [];
const print = (text = "") => {
  lines.push(text);
  process.stdout.write(`${text}\n`);
};

print(`# Parley benchmarks`);
print();
print(`Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"} (${arch()}), ${format(totalmem() / 2 ** 30, 1)} GiB RAM.`);
const versionOf = (name: string) => (JSON.parse(readFileSync(`node_modules/${name}/package.json`, "utf8")) as { version: string }).version;
const packages = [
  "better-sqlite3",
  "@anthropic-ai/sdk",
  "@slack/bolt",
  "@langchain/langgraph",
  "@langchain/langgraph-checkpoint-sqlite",
  "tsx",
];
print(`Packages: ${packages.map((name) => `${name} ${versionOf(name)}`).join(", ")}.`);
print(`Command: \`npm run bench${process.argv.slice(2).length > 0 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}\``);
print();

print("## 1–3. Suspend + resume: Parley, LangGraph JS and raw better-sqlite3");
print();
print(`K = 3 asks per session, zero-latency scripted model, WAL with synchronous=NORMAL everywhere; each resume runs to the next suspend.`);
print(
  `Parley and raw: ${sessions} sessions per H, ${throughputRuns} runs, the median run by resumes/s (the spread of resumes/s in brackets); LangGraph: fewer sessions (its checkpoints grow with H), one run, same per-resume measure. Parley checkpoints the WAL from a worker thread; "checkpoints on commit" is the same engine with SQLite's own checkpoint on commit (Parley before issue 16).`,
);
print();
print("| H | system | sessions | resumes/s | p50 ms | p99 ms | DB KiB/session | peak RSS MiB |");
print("|---:|---|---:|---:|---:|---:|---:|---:|");
const ratios: string[] = [];
for (const history of histories) {
  const results: Record<string, ThroughputResult> = {};
  for (const [system, count, runs] of [
    ["parley", sessions, throughputRuns],
    ["parley-on-commit", sessions, throughputRuns],
    ["raw", sessions, throughputRuns],
    ["langgraph", langgraphSessions(history), 1],
  ] as const) {
    log(`throughput: ${system} H=${history} N=${count} × ${runs}`);
    const all = Array.from({ length: runs }, () => JSON.parse(worker("throughput", [system, history, count, 3])) as ThroughputResult).sort(
      (a, b) => a.resumesPerSecond - b.resumesPerSecond,
    );
    const result = all[Math.floor(all.length / 2)]!;
    results[system] = result;
    const spread = runs > 1 ? ` (${format(all[0]!.resumesPerSecond)}–${format(all.at(-1)!.resumesPerSecond)})` : "";
    const name = system === "parley-on-commit" ? "Parley, checkpoints on commit" : result.system;
    print(
      `| ${history} | ${name} | ${result.sessions} | ${format(result.resumesPerSecond)}${spread} | ${format(result.p50Ms, 2)} | ${format(result.p99Ms, 2)} | ${format(result.bytesPerSession / 1024, 1)} | ${format(result.peakRssMiB)} |`,
    );
  }
  const parley = results.parley!;
  const raw = results.raw!;
  const langgraph = results.langgraph!;
  ratios.push(
    `| ${history} | ${format(parley.resumesPerSecond / langgraph.resumesPerSecond, 1)}× | ${format(parley.resumesPerSecond / raw.resumesPerSecond, 2)}× | ${format(parley.bytesPerSession / raw.bytesPerSession, 2)}× | ${format(parley.p50Ms / raw.p50Ms, 2)}× |`,
  );
}
print();
print("| H | Parley / LangGraph (resumes/s) | Parley / raw (resumes/s) | Parley / raw (DB size) | Parley / raw (p50) |");
print("|---:|---:|---:|---:|---:|");
for (const row of ratios) print(row);
print();

log(`ack latency: ${acks} concurrent clicks`);
print("## 4. Interaction ack latency (the real bot process, real Bolt HTTP receiver, model fake slowed to 2 s)");
print();
print(
  `Each click taps a different session's card with a signed \`block_actions\` post, sent from a process of its own; the bot runs \`src/main.ts\` alone in its process. \`at once\`: every click sent at the same instant. \`over 1 s\`: the clicks arrive evenly over one second. ${throughputRuns} runs each, the median run by p99 (the spread of p99 in brackets). CPU per click: the bot's user + system CPU from the first click to the last resume's model request, over the clicks (the ack and the resume's work). Goals (issue 16): p99 < 50 ms over 1 s, < 300 ms at once.`,
);
print();
print("| clicks | arrival | acked 200 | p50 ms | p99 ms | max ms | bot CPU per click ms |");
print("|---:|---|---:|---:|---:|---:|---:|");
for (const [count, mode] of [
  [acks, "burst"],
  [acks, "spread"],
  [Math.max(10, Math.round(acks / 5)), "spread"],
] as const) {
  try {
    interface Ack {
      clicks: number;
      p50Ms: number;
      p99Ms: number;
      maxMs: number;
      acked: number;
      cpuPerClickMs: number;
    }
    const all = Array.from({ length: throughputRuns }, () => JSON.parse(worker("ack-latency", [count, mode])) as Ack).sort(
      (a, b) => a.p99Ms - b.p99Ms,
    );
    const ack = all[Math.floor(all.length / 2)]!;
    const spread = all.length > 1 ? ` (${format(all[0]!.p99Ms, 1)}–${format(all.at(-1)!.p99Ms, 1)})` : "";
    print(
      `| ${ack.clicks} | ${mode === "burst" ? "at once" : "over 1 s"} | ${ack.acked} | ${format(ack.p50Ms, 1)} | ${format(ack.p99Ms, 1)}${spread} | ${format(ack.maxMs, 1)} | ${format(ack.cpuPerClickMs, 2)} |`,
    );
  } catch (error) {
    print(`| ${count} | ${mode} | not measured: ${failure(error)} | | | | |`);
  }
}
print();

log(`memory: ${memoryPoints}`);
print("## 5. Memory with many suspended sessions (one process, after GC)");
print();
const memory = JSON.parse(worker("memory", [memoryPoints], ["--expose-gc"])) as {
  rows: Array<{ suspended: number; rssMiB: number; heapMiB: number }>;
};
print("| suspended sessions | RSS MiB | JS heap MiB |");
print("|---:|---:|---:|");
for (const row of memory.rows) print(`| ${format(row.suspended)} | ${format(row.rssMiB, 1)} | ${format(row.heapMiB, 1)} |`);
print();

log(`sdk overhead: ${rounds} rounds`);
print("## 6. Overhead per ask round trip through the real Anthropic SDK (local streaming Messages API)");
print();
print("| round trips | total p50 ms | bot overhead p50 ms | bot overhead p99 ms |");
print("|---:|---:|---:|---:|");
try {
  const sdk = JSON.parse(worker("sdk-overhead", [rounds])) as {
    rounds: number;
    totalP50Ms: number;
    overheadP50Ms: number;
    overheadP99Ms: number;
  };
  print(`| ${sdk.rounds} | ${format(sdk.totalP50Ms, 2)} | ${format(sdk.overheadP50Ms, 2)} | ${format(sdk.overheadP99Ms, 2)} |`);
} catch (error) {
  // A failing worker costs its own row, not the sections after it.
  print(`| ${rounds} | not measured: ${failure(error)} | | |`);
}
print();
print("Overhead = answer → next card, minus the time the fake model spent serving the request (SDK, HTTP, store, engine).");
print();

log(`mcp overhead: ${mcpCalls} calls`);
print("## 7. What Parley adds to an MCP tool call (local stdio server, one call at a time)");
print();
const mcp = JSON.parse(worker("mcp-overhead", [mcpCalls])) as Record<"raw" | "provider" | "journaled", { p50Ms: number; p99Ms: number }> & {
  calls: number;
};
print("| path | p50 ms | p99 ms | p50 over raw ms |");
print("|---|---:|---:|---:|");
for (const [name, label] of [
  ["raw", "the SDK's Client.callTool"],
  ["provider", "Parley's McpToolProvider.call"],
  ["journaled", "provider call inside the tool journal's two SQLite writes"],
] as const) {
  const row = mcp[name];
  print(`| ${label} | ${format(row.p50Ms, 3)} | ${format(row.p99Ms, 3)} | ${format(row.p50Ms - mcp.raw.p50Ms, 3)} |`);
}
print();
print(`${format(mcp.calls)} calls of the test server's read-only \`lookup\` each way, after 20 warm-up calls.`);
print();

log(`api load: ${apiAsks} asks at ${apiRate}/s, then ${apiConcurrency} open at a time`);
print("## 8. API load (POST /v1/asks on the real bot process, each ask answered by a tap on its card)");
print();
print("The bot runs `src/main.ts` alone in its process (Bolt HTTP mode, the API on its listener, SQLite, `API_RATE_LIMIT=100000`);");
print("the caller and the fake Slack Web API share the bench's process. Each ask is a `confirm` in a new thread, long-polled");
print("(`GET ?wait=30`) from its 201. `steady`: creates sent open-loop at a fixed rate, each card tapped 100 ms after it is");
print("posted. `closed`: a fixed number of asks open at a time, each card tapped as soon as it is posted, the next create sent");
print("when an ask is seen answered. create → card: POST sent → the fake Slack receives that ask's `chat.postMessage`;");
print("tap → answered: signed `block_actions` sent → a GET returns `answered`. Lost: not seen answered, or not read back as");
print("answered by a last GET. Doubled: two answers (audit), two cards, two settles (`chat.update`) or two threads for one ask.");
print();
print(
  "| asks | arrival | created | answered | lost | doubled | create → card p50 / p95 / p99 ms | tap → answered p50 / p99 ms | wall s | asks/s | bot CPU ms/ask |",
);
print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
const apiNotes: string[] = [];
for (const [arrival, tapDelay, label] of [
  [String(apiRate), 100, `steady ${apiRate}/s`],
  [`c${apiConcurrency}`, 0, `closed, ${apiConcurrency} open`],
] as const) {
  try {
    const api = JSON.parse(worker("api-load", [apiAsks, arrival, tapDelay])) as {
      asks: number;
      created: number;
      answered: number;
      lost: number;
      doubled: Record<"answers" | "cards" | "settles" | "threads", number>;
      createToCardMs: Record<"p50" | "p95" | "p99", number>;
      tapToAnsweredMs: Record<"p50" | "p99", number>;
      wallMs: number;
      asksPerSecond: number;
      botCpuMsPerAsk: number | null;
      benchCpuMsPerAsk: number;
      otherCores: number | null;
    };
    const doubled = Object.entries(api.doubled)
      .filter(([, value]) => value !== 0)
      .map(([kind, value]) => `${value} ${kind}`);
    print(
      `| ${format(api.asks)} | ${label} | ${api.created} | ${api.answered} | ${api.lost} | ${doubled.length === 0 ? 0 : doubled.join(", ")} | ${format(api.createToCardMs.p50, 1)} / ${format(api.createToCardMs.p95, 1)} / ${format(api.createToCardMs.p99, 1)} | ${format(api.tapToAnsweredMs.p50, 1)} / ${format(api.tapToAnsweredMs.p99, 1)} | ${format(api.wallMs / 1000, 1)} | ${format(api.asksPerSecond)} | ${api.botCpuMsPerAsk === null ? "–" : format(api.botCpuMsPerAsk, 1)} |`,
    );
    apiNotes.push(
      `${label}: the caller and the fake Slack used ${format(api.benchCpuMsPerAsk, 1)} ms of CPU per ask` +
        (api.otherCores === null
          ? ""
          : `; other processes on the machine used ${format(api.otherCores, 2)} of its ${cpus().length} cores meanwhile`),
    );
  } catch (error) {
    print(`| ${apiAsks} | ${label} | not measured: ${failure(error)} | | | | | | | | |`);
  }
}
print();
print(`${apiNotes.join(". ")}.`);

print();

log("cache billing: resumes after 1, 10, 60 and 61 minutes");
print("## 9. Prompt cache: input tokens billed per resume, with and without the choice of ttl (issue 16)");
print();
try {
  interface Billed {
    billed: number;
    read: number;
    write5m: number;
    write1h: number;
    uncached: number;
  }
  interface AskRow {
    afterMinutes: number;
    answerAfterMinutes: number;
    without: { history: number; asking: Billed; resume: Billed };
    with: { history: number; asking: Billed; resume: Billed };
  }
  const cache = JSON.parse(worker("cache-billing", [20_000, "1,10,60,61"])) as {
    files: number;
    resumes: AskRow[];
    coldAsk: AskRow;
    firstTurn: { without: number; with: number };
    replies: Array<{ afterMinutes: number; without: { history: number; billed: number }; with: { history: number; billed: number } }>;
  };
  const how = (row: Billed) =>
    [
      row.read > 0 ? `reads ${format(row.read)}` : "",
      row.write5m > 0 ? `writes ${format(row.write5m)} for 5 min` : "",
      row.write1h > 0 ? `writes ${format(row.write1h)} for 1 h` : "",
      row.uncached > 0 ? `${format(row.uncached)} uncached` : "",
    ]
      .filter(Boolean)
      .join(", ");
  const signed = (value: number) => `${value > 0 ? "+" : value < 0 ? "−" : "±"}${format(Math.abs(value))}`;
  const first = cache.resumes[0]!;
  print(
    `One thread through the real engine, SDK and adapter: Parley's prompt and tools, then ${cache.files} log files read in the first turn, ${format(first.with.history)} tokens in all when, a minute later, the next turn asks; the person answers N minutes after the card. The fake Messages API keeps the prompt cache as the API does (\`test/fakes/fake-anthropic.ts\`, 4 characters a token). Billed, in base input tokens: uncached + 1.25 × 5-minute writes + 2 × 1-hour writes + 0.1 × reads. **without**: every request with the API's default 5 minutes (Parley before issue 16); **with**: \`src/loop/cache-ttl.ts\` chooses.`,
  );
  print();
  print("| answer after | resume billed, without | how | resume billed, with | how | with − without |");
  print("|---:|---:|---|---:|---|---:|");
  for (const row of cache.resumes) {
    print(
      `| ${row.answerAfterMinutes} min | ${format(row.without.resume.billed)} | ${how(row.without.resume)} | ${format(row.with.resume.billed)} | ${how(row.with.resume)} | ${signed(row.with.resume.billed - row.without.resume.billed)} |`,
    );
  }
  print();
  print(
    `The request that asks pays the hour up front: ${format(first.without.asking.billed)} without, ${format(first.with.asking.billed)} with (${signed(first.with.asking.billed - first.without.asking.billed)}; it reads ${format(first.with.asking.read)} and writes ${format(first.with.asking.write1h)} new tokens at 2× instead of 1.25×). Past the hour both write the history again at the 5-minute price: the choice keeps 5 minutes for a request that must write more than a tenth of its prompt.`,
  );
  print();
  const cold = cache.coldAsk;
  print(
    `Not helped: an ask that is the first request after ${cold.afterMinutes / 60} quiet hours writes the whole history (${format(cold.without.asking.billed)} billed either way) and keeps 5 minutes, so an answer ${cold.answerAfterMinutes} minutes later writes it again: ${format(cold.without.resume.billed)} without, ${format(cold.with.resume.billed)} with.`,
  );
  print();
  print("Turns that end without asking, billed in all:");
  print();
  print("| turn | billed, without | billed, with | what the choice adds |");
  print("|---|---:|---:|---:|");
  print(
    `| the first: ${cache.files} log files read, ${cache.files + 1} requests | ${format(cache.firstTurn.without)} | ${format(cache.firstTurn.with)} | ${signed(cache.firstTurn.with - cache.firstTurn.without)} |`,
  );
  for (const row of cache.replies) {
    const after =
      row.afterMinutes < 60 ? `${row.afterMinutes} min later (history cached)` : `${row.afterMinutes / 60} h later (cache lapsed)`;
    print(
      `| the next message, ${after}, answered at once | ${format(row.without.billed)} | ${format(row.with.billed)} | ${signed(row.with.billed - row.without.billed)} |`,
    );
  }
} catch (error) {
  print(`Not measured: ${failure(error)}`);
}

print();
log("postgres scaling: Parley on PostgreSQL with 1, 2, 4 processes, SQLite, LangGraph JS on PostgreSQL");
print("## 10. Suspend + resume on PostgreSQL: 1, 2 and 4 Parley processes, SQLite, LangGraph JS's PostgreSQL checkpointer (issue 14)");
print();
print(
  `Section 1–3's work (K = 3, zero-latency model) by N processes at once, each on sessions of its own, against one PostgreSQL server (driver pg ${versionOf("pg")}) in a schema of the run's own; \`@langchain/langgraph-checkpoint-postgres\` ${versionOf("@langchain/langgraph-checkpoint-postgres")}. resumes/s: all processes' resumes over the wall time of the timed phase. KiB/session: the schema's tables (pg_total_relation_size) or the SQLite file, over the sessions written. One run each; \`npx tsx bench/postgres-scaling.ts\` takes the median of three (docs/benchmarks.md).`,
);
print();
print("| H | system | store | processes | sessions | resumes/s | p50 ms | p99 ms | KiB/session | after VACUUM FULL |");
print("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|");
type Scaling = import("./workers/postgres-throughput.js").ScalingResult;
for (const history of quick ? [0, 200] : [0, 20, 200]) {
  for (const [system, processes, perProcess] of [
    ["parley-sqlite", 1, quick ? 50 : 500],
    ["parley-postgres", 1, quick ? 20 : 150],
    ["parley-postgres", 2, quick ? 20 : 150],
    ["parley-postgres", 4, quick ? 20 : 150],
    ["langgraph-postgres", 1, quick ? 10 : history >= 200 ? 30 : 60],
  ] as const) {
    try {
      const row = JSON.parse(worker("postgres-throughput", [system, processes, history, perProcess])) as Scaling;
      const vacuumed = row.vacuumedBytesPerSession === null ? "–" : format(row.vacuumedBytesPerSession / 1024, 1);
      print(
        `| ${history} | ${row.system} | ${row.store === "postgres" ? "PostgreSQL" : "SQLite"} | ${processes} | ${row.sessions} | ${format(row.resumesPerSecond)} | ${format(row.p50Ms, 2)} | ${format(row.p99Ms, 1)} | ${format(row.bytesPerSession / 1024, 1)} | ${vacuumed} |`,
      );
    } catch (error) {
      print(`| ${history} | ${system} | | ${processes} | | not measured: ${failure(error)} | | | | |`);
    }
  }
}

print();
log("platform calls per answered ask: Slack and Discord, quick and slow model steps");
print("## 11. Platform calls per answered ask (issue 16)");
print();
print(
  "The real engine and adapters (Bolt, discord.js) against the test fakes. Each session asks 3 questions, each answered by a tap, then answers; every platform call from the first tap to the final answer is counted and divided by the answered asks. A model step over a second posts a `Thinking…` status line, which the next card or the answer is then edited into (one more call); under a second it shows nothing. Slack: Web API calls (the ack is the HTTP response to the tap, not a call). Discord: REST calls, with the interaction's ack apart.",
);
print();
print("| model step | platform | calls per answered ask | of which |");
print("|---|---|---:|---|");
for (const modelMs of [0, 1500]) {
  try {
    interface Calls {
      perAnsweredAsk: number;
      byKind: Record<string, number>;
    }
    const result = JSON.parse(worker("platform-calls", [quick ? 2 : modelMs > 0 ? 3 : 20, modelMs])) as { slack: Calls; discord: Calls };
    const kinds = (calls: Calls) =>
      Object.entries(calls.byKind)
        .map(([kind, count]) => `${kind} ${format(count, 2)}`)
        .join(", ");
    const step = modelMs === 0 ? "instant" : `${format(modelMs / 1000, 1)} s`;
    print(`| ${step} | Slack | ${format(result.slack.perAnsweredAsk, 2)} | ${kinds(result.slack)} |`);
    const ack = result.discord.byKind["interaction ack"] ?? 0;
    print(`| ${step} | Discord | ${format(result.discord.perAnsweredAsk - ack, 2)} + ${format(ack, 2)} ack | ${kinds(result.discord)} |`);
  } catch (error) {
    print(`| ${modelMs} ms | | not measured: ${failure(error)} | |`);
  }
}

if (flags.out) writeFileSync(flags.out, `${lines.join("\n")}\n`);
