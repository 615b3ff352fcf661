import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ask, FakeAnthropic, text } from "../../test/fakes/fake-anthropic.js";
import { FAKE_BOT_TOKEN, FAKE_TEAM_ID, FakeSlackApi } from "../../test/fakes/fake-slack-api.js";
import { FAKE_SIGNING_SECRET, SlackRequestSender } from "../../test/fakes/fake-slack-signer.js";
import { ALICE, actionIdsOf } from "../../test/slack/slack-harness.js";
import { blockActions, CHANNEL, messageEvent } from "../../test/slack/slack-payloads.js";
import { percentile } from "../workload.js";

// The real bot (`src/main.ts`, Slack HTTP mode) runs alone in a child process, as in production; the fakes
// and the N clicking people live in this process. The model takes 2 s per call, so an ack that waited for
// it would show. Every click taps a different session's card at the same moment.
const clicks = Number(process.argv[2] ?? 500);
/** `burst`: every click at the same instant; `spread`: the clicks arrive evenly over one second; `serial`: one at a time. */
const mode = process.argv[3] ?? "burst";
const MODEL_DELAY_MS = 2000;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The clicks, sent from a process of their own (click-sender.ts). */
async function sendClicks(job: {
  url: string;
  mode: string;
  payloads: Array<Record<string, unknown>>;
}): Promise<Array<{ ms: number; ok: boolean }>> {
  const sender = spawn(process.execPath, ["--import", "tsx", "bench/workers/click-sender.ts"], { stdio: ["pipe", "pipe", "inherit"] });
  const output: Buffer[] = [];
  sender.stdout.on("data", (chunk: Buffer) => output.push(chunk));
  const exited = new Promise((resolve) => sender.once("exit", resolve));
  sender.stdin.end(JSON.stringify(job));
  await exited;
  return JSON.parse(Buffer.concat(output).toString("utf8")) as Array<{ ms: number; ok: boolean }>;
}

/** User + system CPU the bot process has used, from /proc (Linux). */
function botCpuMs(child: ChildProcess | undefined): number {
  const fields = readFileSync(`/proc/${child?.pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  // utime and stime are fields 14 and 15 of stat, 12 and 13 after the name; in clock ticks of 10 ms.
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const anthropic = await new FakeAnthropic().start();
const slack = await new FakeSlackApi().start();
slack.addUser({ id: ALICE, name: "alice" });
const directory = mkdtempSync(join(tmpdir(), "parley-ack-"));
const port = await freePort();
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
        DATABASE_PATH: join(directory, "ack.db"),
        LOG_LEVEL: "error",
      },
      stdio: ["ignore", "ignore", "inherit"],
    },
  );
  const sender = new SlackRequestSender(`http://127.0.0.1:${port}`);
  await waitFor(() => slack.callsOf("auth.test").length > 0, "the bot to start");
  await new Promise((resolve) => setTimeout(resolve, 500));

  anthropic.script(...Array.from({ length: clicks }, () => ask({ type: "confirm", question: "Ship it?" })));
  for (let index = 0; index < clicks; index++) {
    const ts = `1700000000.${String(index).padStart(6, "0")}`;
    await sender.event(messageEvent("app_mention", { user: ALICE, text: "<@U_PARLEY_BOT> ship", ts }), {
      teamId: FAKE_TEAM_ID,
      eventId: `Ev${index}`,
    });
  }
  const cards = () =>
    slack.callsOf("chat.postMessage").filter((call) => call.ok && actionIdsOf(call.params.blocks).some((id) => id.startsWith("ask:")));
  await waitFor(() => cards().length >= clicks, `${clicks} cards`);
  anthropic.script(...Array.from({ length: clicks }, () => ({ content: [text("Shipped.")], delayMs: MODEL_DELAY_MS })));

  const payloads = cards().map((call) => {
    const askId = actionIdsOf(call.params.blocks)[0]?.split(":")[1] ?? "";
    return blockActions({
      user: ALICE,
      actionId: `ask:${askId}:opt:0`,
      channel: CHANNEL,
      cardTs: String(call.result.ts),
      threadTs: String(call.params.thread_ts),
      responseUrl: `${slack.url}/respond/${askId}`,
    });
  });
  const cpuBefore = botCpuMs(bot);
  const timings = await sendClicks({ url: `http://127.0.0.1:${port}`, mode, payloads });
  await waitFor(() => anthropic.requests.length >= 2 * clicks, "every resume to reach the model");
  // The bot's CPU from the first click to the last resume's model request: the ack and the resume's work.
  const cpuPerClickMs = (botCpuMs(bot) - cpuBefore) / clicks;
  const sorted = timings.map((timing) => timing.ms).sort((a, b) => a - b);
  process.stdout.write(
    `${JSON.stringify({ clicks, mode, acked: timings.filter((timing) => timing.ok).length, p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99), maxMs: sorted.at(-1) ?? 0, cpuPerClickMs })}\n`,
  );
} finally {
  bot?.kill("SIGTERM");
  await new Promise((resolve) => (bot && bot.exitCode === null ? bot.once("exit", resolve) : resolve(null)));
  await anthropic.close();
  await slack.close();
  rmSync(directory, { recursive: true, force: true });
}
