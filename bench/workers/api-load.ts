import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import Database from "better-sqlite3";
import { freePort } from "../../test/chaos/bot-process.js";
import { FakeAnthropic } from "../../test/fakes/fake-anthropic.js";
import { FAKE_BOT_TOKEN, FakeSlackApi, type RecordedSlackCall } from "../../test/fakes/fake-slack-api.js";
import { FAKE_SIGNING_SECRET, SlackRequestSender } from "../../test/fakes/fake-slack-signer.js";
import { ALICE, actionIdsOf } from "../../test/slack/slack-harness.js";
import { CHANNEL, cardTap } from "../../test/slack/slack-payloads.js";
import { percentile } from "../workload.js";

// API load: N asks created through POST /v1/asks, each answered by a signed block_actions tap on its card.
// As in ack-latency, the real bot (`src/main.ts`: Bolt in Slack HTTP mode, the API on Slack's listener, a SQLite
// file, API_TOKENS and API_RATE_LIMIT from the environment) runs alone in a child process; the fake Slack Web API
// and the program calling the API live in this process, so both ends of every measure use one clock.
//
//   api-load.ts <asks> <arrival> <tapDelayMs>
//   arrival `50`: open loop, 50 creates a second, each sent at its time whether or not earlier ones came back;
//   arrival `c16`: closed loop, 16 asks open at a time, the next create sent when an ask is seen answered.
//
// Each ask gets a long-poll (GET ?wait=30, as docs/api.md's clients do) right after its 201, and its card is
// tapped (Yes) `tapDelayMs` after the card reached the fake Slack.
const count = Number(process.argv[2] ?? 1000);
const arrival = process.argv[3] ?? "50";
const tapDelayMs = Number(process.argv[4] ?? 100);
const closedLoop = arrival.startsWith("c");
const rate = closedLoop ? 0 : Number(arrival);
const concurrency = closedLoop ? Number(arrival.slice(1)) : 0;
if (!(count > 0) || !(closedLoop ? concurrency > 0 : rate > 0) || !(tapDelayMs >= 0))
  throw new Error(`bad arguments: ${process.argv.slice(2)}`);

const SECRET = "bench-secret-0123456789abcdef";
const DEADLINE_MS = 180_000;

interface Card {
  ts: string;
  thread: string;
  blocks: unknown;
}

interface Tracked {
  index: number;
  sentAt: number;
  status?: number;
  respondedAt?: number;
  id?: string;
  tapAt?: number;
  tapAckMs?: number;
  tapStatus?: number;
  answeredAt?: number;
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = DEADLINE_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** CPU seconds (user + system) a process has used, from /proc; undefined where there is none. */
function cpuSecondsOf(pid: number | undefined): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    // utime and stime, fields 14 and 15 of stat, in clock ticks (100 a second on Linux).
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/** CPU seconds the whole machine has spent busy (all cores), from /proc/stat; undefined where there is none. */
function machineBusySeconds(): number | undefined {
  try {
    const [, ...ticks] = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/);
    // user nice system idle iowait irq softirq steal: busy is all but idle and iowait.
    const [user, nice, system, , , irq, softirq, steal] = ticks.map(Number);
    return ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) / 100;
  } catch {
    return undefined;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const summary = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95), p99: percentile(sorted, 0.99), max: sorted.at(-1) ?? 0 };
};

const anthropic = await new FakeAnthropic().start();
const slack = await new FakeSlackApi().start();
slack.addUser({ id: ALICE, name: "alice" });
const directory = mkdtempSync(join(tmpdir(), "parley-api-load-"));
const databasePath = join(directory, "api.db");
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const sender = new SlackRequestSender(base);

// What the fake Slack received, per ask, timed when it received it: the fake records every call in `calls`.
const cardAt = new Map<string, number>();
const cards = new Map<string, Card>();
const cardPosts = new Map<string, number>();
const askOfCardTs = new Map<string, string>();
const settles = new Map<string, number>();
let threadsOpened = 0;
const push = slack.calls.push.bind(slack.calls);
slack.calls.push = (...calls: RecordedSlackCall[]) => {
  const now = performance.now();
  for (const call of calls) observe(call, now);
  return push(...calls);
};

function observe(call: RecordedSlackCall, now: number): void {
  if (!call.ok) return;
  if (call.method === "chat.postMessage") {
    const actionIds = actionIdsOf(call.params.blocks);
    const askId = actionIds.find((id) => id.startsWith("ask:"))?.split(":")[1];
    if (askId === undefined) {
      // A top-level message: the opener of an API ask's thread.
      if (call.params.thread_ts === undefined) threadsOpened++;
      return;
    }
    cardPosts.set(askId, (cardPosts.get(askId) ?? 0) + 1);
    if (cardAt.has(askId)) return;
    cardAt.set(askId, now);
    const ts = String(call.result.ts);
    askOfCardTs.set(ts, askId);
    cards.set(askId, { ts, thread: String(call.params.thread_ts), blocks: call.params.blocks });
    setImmediate(() => maybeTap(askId));
  } else if (call.method === "chat.update") {
    const askId = askOfCardTs.get(String(call.params.ts));
    if (askId !== undefined) settles.set(askId, (settles.get(askId) ?? 0) + 1);
  }
}

const byId = new Map<string, Tracked>();
const tapped = new Set<string>();
const errors: string[] = [];

/** Taps a card once both it has been posted and its ask's 201 has come back. */
function maybeTap(askId: string): void {
  const ask = byId.get(askId);
  const card = cards.get(askId);
  if (!ask || !card || tapped.has(askId)) return;
  tapped.add(askId);
  setTimeout(() => void tap(ask, card), tapDelayMs);
}

async function tap(ask: Tracked, card: Card): Promise<void> {
  try {
    // Built before the clock starts: the tap's time is the request's alone.
    const payload = cardTap({ card, thread: card.thread, user: ALICE, button: "Yes", responseUrl: `${slack.url}/respond/${ask.id}` });
    ask.tapAt = performance.now();
    const response = await sender.interaction(payload);
    await response.arrayBuffer();
    ask.tapAckMs = performance.now() - ask.tapAt;
    ask.tapStatus = response.status;
  } catch (error) {
    errors.push(`tap: ${String(error)}`);
  }
}

const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${SECRET}`, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

/** Long-polls an ask until it has ended, as a client of docs/api.md does. */
async function untilEnded(ask: Tracked): Promise<void> {
  const deadline = Date.now() + DEADLINE_MS;
  while (Date.now() < deadline) {
    const response = await call("GET", `/v1/asks/${ask.id}?wait=30`);
    const view = (await response.json()) as { status?: string };
    if (response.status !== 200) {
      errors.push(`GET ${response.status}`);
      await sleep(100);
    } else if (view.status === "answered") {
      ask.answeredAt = performance.now();
      return;
    } else if (view.status !== "pending") return;
  }
}

let inFlight = 0;
let maxInFlight = 0;

/** One ask from the caller's side: create it, then wait for its answer; the tap comes from `observe`. */
async function run(ask: Tracked): Promise<void> {
  inFlight++;
  maxInFlight = Math.max(maxInFlight, inFlight);
  try {
    const response = await call(
      "POST",
      "/v1/asks",
      { channel: `slack:${CHANNEL}`, ask: { type: "confirm", question: `Ship build ${ask.index}?` }, metadata: { build: ask.index } },
      { "idempotency-key": `bench-${ask.index}` },
    );
    const view = (await response.json()) as { id?: string };
    ask.respondedAt = performance.now();
    ask.status = response.status;
    if (response.status !== 201 || typeof view.id !== "string") {
      errors.push(`POST ${response.status}`);
      return;
    }
    ask.id = view.id;
    byId.set(view.id, ask);
    maybeTap(view.id);
  } catch (error) {
    errors.push(`POST: ${String(error)}`);
    return;
  } finally {
    inFlight--;
  }
  await untilEnded(ask);
}

let bot: ChildProcess | undefined;
try {
  bot = spawn(
    process.execPath,
    [...(process.env.BOT_PROFILE ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BOT_PROFILE}`] : []), "--import", "tsx", "src/main.ts"],
    {
      env: {
        PATH: process.env.PATH ?? "",
        ANTHROPIC_API_KEY: "bench",
        ANTHROPIC_BASE_URL: anthropic.url,
        SLACK_BOT_TOKEN: FAKE_BOT_TOKEN,
        SLACK_SIGNING_SECRET: FAKE_SIGNING_SECRET,
        SLACK_API_URL: slack.apiUrl,
        PORT: String(port),
        HOST: "127.0.0.1",
        DATABASE_PATH: databasePath,
        API_TOKENS: `bench:${SECRET}`,
        // The most the config takes (calls a minute per token): the bench measures Parley, not its limiter.
        API_RATE_LIMIT: "100000",
        LOG_LEVEL: "error",
      },
      stdio: ["ignore", "ignore", "inherit"],
    },
  );
  const exited = new Promise<never>((_, reject) => bot?.once("exit", (code) => reject(new Error(`the bot exited (${code})`))));
  exited.catch(() => {});
  const healthy = () =>
    fetch(`${base}/healthz`).then(
      (response) => response.ok,
      () => false,
    );
  const up = async () => {
    await waitFor(() => slack.callsOf("auth.test").length > 0, "the bot to start", 60_000);
    for (let tries = 0; !(await healthy()); tries++) {
      if (tries > 300) throw new Error("the API listener did not come up");
      await sleep(100);
    }
  };
  await Promise.race([exited, up()]);

  // Warm-up, not counted: 20 asks through the whole path (JIT, connection pools, users.info).
  const warm = Array.from({ length: 20 }, (_, index): Tracked => ({ index: -1 - index, sentAt: performance.now() }));
  await Promise.all(warm.map(run));
  await waitFor(() => warm.every((ask) => ask.id !== undefined && (settles.get(ask.id) ?? 0) > 0), "the warm-up cards to settle", 30_000);
  if (warm.some((ask) => ask.answeredAt === undefined)) throw new Error(`the warm-up asks were not all answered: ${errors.slice(0, 3)}`);
  const warmIds = warm.map((ask) => ask.id!);
  const warmThreads = threadsOpened;
  errors.length = 0;

  const tracked: Tracked[] = Array.from({ length: count }, (_, index) => ({ index, sentAt: 0 }));
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  maxInFlight = 0;
  const botCpuBefore = cpuSecondsOf(bot.pid);
  const ownCpuBefore = process.cpuUsage();
  const machineBefore = machineBusySeconds();
  const started = performance.now();
  const start = (ask: Tracked) => {
    ask.sentAt = performance.now();
    return run(ask);
  };
  const work: Array<Promise<void>> = [];
  if (closedLoop) {
    let next = 0;
    const lane = async () => {
      while (next < count) await start(tracked[next++]!);
    };
    for (let lanes = 0; lanes < concurrency; lanes++) work.push(lane());
  } else
    for (const ask of tracked) {
      const wait = started + (ask.index * 1000) / rate - performance.now();
      if (wait > 1) await sleep(wait);
      work.push(start(ask));
    }
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(work), new Promise((resolve) => (timer = setTimeout(resolve, DEADLINE_MS)))]);
  clearTimeout(timer);
  // First create sent → last ask seen answered (or now, should some never be).
  const lastAnswered = Math.max(...tracked.map((ask) => ask.answeredAt ?? 0));
  const wallMs = (tracked.every((ask) => ask.answeredAt !== undefined) ? lastAnswered : performance.now()) - started;
  loop.disable();
  const botCpuAfter = cpuSecondsOf(bot.pid);
  const ownCpu = process.cpuUsage(ownCpuBefore);
  const machineAfter = machineBusySeconds();
  const botCpuS = botCpuBefore === undefined || botCpuAfter === undefined ? undefined : botCpuAfter - botCpuBefore;
  const ownCpuS = (ownCpu.user + ownCpu.system) / 1e6;
  // What everything else on the machine used meanwhile, in cores: the bench shares the machine it measures.
  const otherCores =
    botCpuS === undefined || machineBefore === undefined || machineAfter === undefined
      ? null
      : Math.max(0, machineAfter - machineBefore - botCpuS - ownCpuS) / (wallMs / 1000);

  // Settles go out after the claim: give the last ones a moment before counting.
  const created = tracked.filter((ask) => ask.id !== undefined);
  const ids = created.map((ask) => ask.id!);
  await waitFor(() => ids.every((id) => (settles.get(id) ?? 0) > 0), "every card to settle", 10_000).catch(() => {});
  // The end state as the API reports it: every ask read once more, without waiting.
  const readAnswered = new Set<string>();
  for (const ask of created) {
    const response = await call("GET", `/v1/asks/${ask.id}`);
    const view = (await response.json()) as { status?: string; answered_by?: string };
    if (response.status === 200 && view.status === "answered" && view.answered_by === `slack:${ALICE}`) readAnswered.add(ask.id!);
  }

  // And as the database has it, once the bot has stopped.
  bot.kill("SIGTERM");
  await new Promise((resolve) => (bot && bot.exitCode === null ? bot.once("exit", resolve) : resolve(null)));
  const db = new Database(databasePath, { readonly: true });
  const notWarm = `target NOT IN (${warmIds.map(() => "?").join(",")})`;
  const claimsByAsk = db
    .prepare(`SELECT target, COUNT(*) AS n FROM audit WHERE action LIKE 'ask-%' AND ${notWarm} GROUP BY target`)
    .all(...warmIds) as Array<{ target: string; n: number }>;
  const storedAnswered = (
    db
      .prepare(
        `SELECT COUNT(*) AS n FROM asks JOIN api_asks ON api_asks.ask_id = asks.id WHERE status = 'answered' AND id NOT IN (${warmIds.map(() => "?").join(",")})`,
      )
      .get(...warmIds) as { n: number }
  ).n;
  db.close();

  const answered = created.filter((ask) => ask.answeredAt !== undefined);
  process.stdout.write(
    `${JSON.stringify({
      asks: count,
      arrival: closedLoop ? `${concurrency} open at a time` : `${rate}/s`,
      tapDelayMs,
      created: created.length,
      answered: answered.length,
      readAnswered: readAnswered.size,
      storedAnswered,
      claimed: claimsByAsk.length,
      lost: created.filter((ask) => ask.answeredAt === undefined || !readAnswered.has(ask.id!)).length,
      doubled: {
        answers: claimsByAsk.filter((row) => row.n > 1).length,
        cards: ids.filter((id) => (cardPosts.get(id) ?? 0) > 1).length,
        settles: ids.filter((id) => (settles.get(id) ?? 0) > 1).length,
        threads: threadsOpened - warmThreads - created.length,
      },
      unsettled: ids.filter((id) => (settles.get(id) ?? 0) === 0).length,
      tapsAcked: created.filter((ask) => ask.tapStatus === 200).length,
      privateNotices: slack.callsOf("chat.postEphemeral").length,
      modelCalls: anthropic.requests.length,
      errors: [...new Set(errors)].slice(0, 5),
      maxCreatesInFlight: maxInFlight,
      createToCardMs: summary(created.filter((ask) => cardAt.has(ask.id!)).map((ask) => cardAt.get(ask.id!)! - ask.sentAt)),
      createResponseMs: summary(created.map((ask) => ask.respondedAt! - ask.sentAt)),
      tapAckMs: summary(created.filter((ask) => ask.tapAckMs !== undefined).map((ask) => ask.tapAckMs!)),
      tapToAnsweredMs: summary(answered.filter((ask) => ask.tapAt !== undefined).map((ask) => ask.answeredAt! - ask.tapAt!)),
      wallMs,
      asksPerSecond: (answered.length * 1000) / wallMs,
      botCpuMsPerAsk: botCpuS === undefined ? null : (botCpuS * 1000) / count,
      benchCpuMsPerAsk: (ownCpuS * 1000) / count,
      otherCores,
      benchLoopDelayP99Ms: loop.percentile(99) / 1e6,
    })}\n`,
  );
} finally {
  if (bot && bot.exitCode === null) {
    bot.kill("SIGTERM");
    await new Promise((resolve) => bot?.once("exit", resolve));
  }
  await anthropic.close();
  await slack.close();
  rmSync(directory, { recursive: true, force: true });
}
