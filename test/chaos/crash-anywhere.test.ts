import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { FAKE_BOT_USER_ID } from "../fakes/fake-slack-api.js";
import { messageEvent } from "../slack/slack-payloads.js";
import type { BotProcess } from "./bot-process.js";
import { betweenOf, prng, waitForHit } from "./chaos-common.js";
import { LET_EXPIRE, SHORT_TIMEOUT_S } from "./chaos-model.js";
import { CHAOS_CHANNEL, ChaosDriver, OWNER } from "./driver.js";
import { type AskRow, checkInvariants } from "./invariants.js";
import { startRig } from "./rig.js";
import { cardAskId, sleep } from "./slack-proxy.js";

/**
 * Issue 7 §1, "Crash anywhere": the real bot (`node --import tsx src/main.ts`, the `npm start` wiring) as a child
 * process against the fake Anthropic and fake Slack servers, SIGKILLed CHAOS_KILLS times at random moments and
 * at the interesting ones, restarted each time:
 * - card-post: a card's chat.postMessage is held; killed before Slack sees it (hold-before; sometimes followed by an
 *   outage longer than a short ask's deadline) or after Slack posted it but before the bot learned the ts (hold-after);
 * - after-tap / after-mention: right after the 200 of a block_actions tap or an app_mention (Bolt acks first);
 * - mid-model: the fake model holds its answer;
 * - claim-resume: the settle of a card (chat.update) is held: the claim is committed, the resumed turn not started;
 * - mid-sweep: the settle of an expiring [let-expire] card is held (the sweeper's claim), or a moment around it;
 * - recovery: within 250 ms of /healthz answering, while recover() runs; random: anywhere;
 * - approve-run: right after the 200 of an Approve tap, between the approval and the tool's execution;
 * - mid-tool: while a tool call the chaos MCP server takes 0.3–1.5 s over is running (issue 12).
 * Then, with the bot stopped, the database and the fakes' records are checked (see invariants.ts).
 * CHAOS_KILLS sets the kill count (12 by default; `npm run test:chaos` runs 200), CHAOS_KEEP=1 keeps the files.
 */

const KILLS = Math.max(1, Number(process.env.CHAOS_KILLS ?? "12") || 12);
const ACTIVE_SESSIONS = KILLS >= 100 ? 8 : 5;
const SEED = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000);
/**
 * A cap, not a target: start-up is ~3.5 s on an idle 2-core machine and an epoch ~4.5 s on average, plus the drain;
 * 200 kills ran past a 7 s-a-kill cap (25 min) on a machine running two other suites, so the cap is the other suites'.
 */
const TIMEOUT_MS = 150_000 + KILLS * 12_000;
const DRAIN_MS = 90_000;

type KillMode =
  | "random"
  | "card-post"
  | "after-tap"
  | "after-mention"
  | "mid-model"
  | "claim-resume"
  | "mid-sweep"
  | "recovery"
  | "approve-run"
  | "mid-tool";
const MODES: Array<[KillMode, number]> = [
  ["random", 16],
  ["card-post", 18],
  ["after-tap", 14],
  ["mid-model", 14],
  ["claim-resume", 10],
  ["mid-sweep", 10],
  ["recovery", 8],
  ["after-mention", 6],
  ["approve-run", 8],
  ["mid-tool", 8],
];

const workDir = mkdtempSync(join(tmpdir(), "parley-chaos-"));

afterAll(() => {
  if (process.env.CHAOS_KEEP !== "1") rmSync(workDir, { recursive: true, force: true });
});

describe("crash anywhere (issue 7 §1)", () => {
  it(
    `loses no ask and doubles no answer across ${KILLS} SIGKILLs of the real bot`,
    async () => {
      const started = Date.now();
      const random = prng(SEED);
      const between = betweenOf(random);
      const dir = join(workDir, "soak");
      mkdirSync(dir);
      const rig = await startRig(dir);
      const { anthropic, slack, proxy, model, bot, databasePath, logPath } = rig;
      const driver = new ChaosDriver({
        sender: rig.sender,
        slack,
        databasePath,
        activeSessions: ACTIVE_SESSIONS,
        epoch: () => bot.epoch,
        botUp: () => bot.healthy,
        random,
      });
      const modesRun = new Map<string, number>();
      /** Epoch starts and kills, for reading a kept run (CHAOS_KEEP=1). */
      const timeline: Array<{ at: number; event: string }> = [];
      const mark = (event: string) => timeline.push({ at: Date.now(), event });
      const count = (mode: string) => modesRun.set(mode, (modesRun.get(mode) ?? 0) + 1);
      const toolStarts = () => rig.toolRecords().filter((line) => line.startsWith("start ")).length;
      const cardTs = () =>
        new Set(slack.callsOf("chat.postMessage").flatMap((call) => (cardAskId(call.params.blocks) ? [String(call.result.ts)] : [])));

      /** Waits for this epoch's kill moment; returns the mode label actually run. */
      const killMoment = async (mode: KillMode): Promise<string> => {
        switch (mode) {
          case "random":
            await sleep(between(200, 2000));
            return mode;
          case "recovery":
            await sleep(between(0, 250));
            return mode;
          case "card-post": {
            const hold = random() < 0.5 ? "hold-before" : "hold-after";
            let heldText = "";
            const hit = await waitForHit(
              (onHit) =>
                proxy.arm({
                  matches: (call) => call.method === "chat.postMessage" && cardAskId(call.params.blocks) !== undefined,
                  mode: hold,
                  holdMs: 1500,
                  onHit: (call) => {
                    heldText = String(call.params.text ?? "");
                    onHit();
                  },
                }),
              3000,
            );
            if (hit) await sleep(between(10, 400));
            // A short-deadline card that never reached Slack, and an outage longer than its deadline.
            if (hit && hold === "hold-before" && heldText.includes(LET_EXPIRE)) return "card-post(hold-before)+outage";
            return hit ? `card-post(${hold})` : "card-post(missed)";
          }
          case "after-tap": {
            const hit = await waitForHit((onHit) => (driver.afterTap = onHit), 2500);
            if (hit) await sleep(between(0, 20));
            return hit ? mode : "after-tap(missed)";
          }
          case "after-mention": {
            // Bolt acks an event before its listener runs; hold the author lookup (users.info) so the kill lands
            // between the 200 and the stored message whenever the lookup is not cached.
            proxy.arm({ matches: (call) => call.method === "users.info", mode: "hold-before", holdMs: 500, onHit: () => undefined });
            const hit = await waitForHit((onHit) => (driver.afterMention = onHit), 4000);
            if (hit) await sleep(between(0, 20));
            return hit ? mode : "after-mention(missed)";
          }
          case "approve-run": {
            const hit = await waitForHit((onHit) => (driver.afterApprove = onHit), 4000);
            if (hit) await sleep(between(0, 30));
            return hit ? mode : "approve-run(missed)";
          }
          case "mid-tool": {
            const before = toolStarts();
            const deadline = Date.now() + 5000;
            while (toolStarts() === before && Date.now() < deadline) await sleep(15);
            const hit = toolStarts() > before;
            if (hit) await sleep(between(0, 300));
            return hit ? mode : "mid-tool(missed)";
          }
          case "mid-model": {
            const hit = await waitForHit((onHit) => model.arm({ holdMs: 2500, onHit }), 3000);
            if (hit) await sleep(between(10, 600));
            return hit ? mode : "mid-model(missed)";
          }
          case "claim-resume": {
            // The settle (chat.update of a card) runs after the claim commits and before the resumed turn starts.
            const hit = await waitForHit(
              (onHit) =>
                proxy.arm({
                  matches: (call) => call.method === "chat.update" && cardTs().has(String(call.params.ts)),
                  mode: "hold-before",
                  holdMs: 800,
                  onHit,
                }),
              3000,
            );
            if (hit) await sleep(between(0, 60));
            return hit ? mode : "claim-resume(missed)";
          }
          case "mid-sweep": {
            // A [let-expire] card posted lately expires within one sweep interval (5 s) after its deadline; its
            // settle is the sweeper's claim landing. Kill while that settle is held, or at a random moment around it.
            const now = Date.now();
            const latest = Math.max(
              0,
              ...proxy.log.filter((entry) => entry.askId !== undefined && entry.text?.includes(LET_EXPIRE)).map((entry) => entry.at),
            );
            const window = latest + SHORT_TIMEOUT_S * 1000 + 5500 - now;
            if (window <= 0) return killMoment("claim-resume");
            const expiring = new Set(
              slack
                .callsOf("chat.postMessage")
                .flatMap((call) => (String(call.params.text ?? "").includes(LET_EXPIRE) ? [String(call.result.ts)] : [])),
            );
            const hit = await waitForHit(
              (onHit) =>
                proxy.arm({
                  matches: (call) => call.method === "chat.update" && expiring.has(String(call.params.ts)),
                  mode: "hold-before",
                  holdMs: 800,
                  onHit,
                }),
              Math.min(window, 9000),
            );
            if (hit) await sleep(between(0, 60));
            return hit ? mode : "mid-sweep(timed)";
          }
        }
      };

      const pickMode = (): KillMode => {
        const total = MODES.reduce((sum, [, weight]) => sum + weight, 0);
        let roll = random() * total;
        for (const [mode, weight] of MODES) {
          roll -= weight;
          if (roll < 0) return mode;
        }
        return "random";
      };

      let kills = 0;
      let finalExit: Awaited<ReturnType<BotProcess["stop"]>>;
      try {
        for (; kills < KILLS; kills++) {
          await bot.start();
          if (kills === 0) driver.start();
          mark(`epoch ${bot.epoch} up`);
          const mode = await killMoment(pickMode());
          await bot.kill();
          mark(`kill ${kills + 1}: ${mode}`);
          // A restart delay; it also lets the fakes read whatever the dead process had already sent, so every
          // request is counted against the process that sent it.
          await sleep(between(100, 300) + (mode.endsWith("+outage") ? SHORT_TIMEOUT_S * 1000 : 0));
          proxy.disarm();
          model.disarm();
          driver.afterTap = undefined;
          driver.afterApprove = undefined;
          driver.afterMention = undefined;
          count(mode);
          if (bot.exits.at(-1)?.unexpected) break;
        }

        // No more kills: let every session run to its end, then stop the bot gracefully.
        driver.draining = true;
        await bot.start();
        const drainStarted = Date.now();
        while (!driver.settled() && Date.now() - drainStarted < DRAIN_MS) await sleep(200);
        await sleep(500);
        await driver.stop();
        finalExit = await bot.stop();
      } finally {
        await driver.stop();
        await bot.kill();
      }

      const report = checkInvariants({
        databasePath,
        slackCalls: slack.calls,
        modelRequests: anthropic.requests,
        modelCalls: model.calls,
        taps: driver.taps,
        owner: OWNER,
        toolRecords: rig.toolRecords(),
      });
      const log = readFileSync(logPath, "utf8");
      const errorLines = log.split("\n").filter((line) => /"level":(50|60)/.test(line) || /unhandled|uncaught/i.test(line));
      const unexpectedExits = bot.exits.filter((exit) => exit.unexpected);
      const wallSeconds = Math.round((Date.now() - started) / 1000);
      const summary = {
        seed: SEED,
        kills,
        killModes: Object.fromEntries([...modesRun].sort()),
        epochs: bot.epoch,
        wallSeconds,
        driver: driver.counts,
        unsettledAtEnd: [...driver.sessions.values()].filter((session) => !session.done).map((session) => session.label),
        finalExit: finalExit ? { code: finalExit.code, signal: finalExit.signal } : undefined,
        proxyDroppedHeldPosts: proxy.dropped,
        ...report.stats,
        botErrorLines: errorLines.length,
        findings: report.findings,
      };
      console.log(`[chaos] ${JSON.stringify(summary, null, 2)}`);
      if (errorLines.length > 0) console.log(`[chaos] bot error lines (first 10):\n${errorLines.slice(0, 10).join("\n")}`);
      if (report.violations.length > 0) console.log(`[chaos] violations (first 40):\n${report.violations.slice(0, 40).join("\n")}`);

      if (process.env.CHAOS_KEEP === "1") {
        console.log(`[chaos] kept ${dir}`);
        writeFileSync(join(dir, "summary.json"), JSON.stringify({ summary, violations: report.violations }, null, 1));
        writeFileSync(join(dir, "slack-calls.json"), JSON.stringify(slack.calls, null, 1));
        writeFileSync(
          join(dir, "model-requests.json"),
          JSON.stringify({ calls: model.calls, requests: anthropic.requests.map((request) => request.body.messages) }, null, 1),
        );
        writeFileSync(join(dir, "timeline.json"), JSON.stringify(timeline, null, 1));
        writeFileSync(join(dir, "proxy-log.json"), JSON.stringify(proxy.log, null, 1));
        writeFileSync(join(dir, "tool-records.txt"), rig.toolRecords().join("\n"));
      }
      await rig.close();

      expect(unexpectedExits, `the bot crashed by itself; see ${logPath} (CHAOS_KEEP=1 keeps it)`).toEqual([]);
      expect(kills).toBe(KILLS);
      expect(report.stats.asks).toBeGreaterThan(0);
      expect(report.stats.toolApprovals).toBeGreaterThan(0);
      expect(report.violations).toEqual([]);
      // And a quick_check on a fresh connection, after the last kill's WAL leftovers were replayed.
      const reopened = new Database(databasePath, { readonly: true });
      expect(reopened.pragma("quick_check", { simple: true })).toBe("ok");
      reopened.close();
    },
    TIMEOUT_MS,
  );

  it("posts, and does not expire, an ask whose deadline passed while the bot was down between persisting it and posting it", async () => {
    // Deterministic: session s1003's first ask is a [let-expire] confirm with timeout_s 6 (see specFor).
    const dir = join(workDir, "unposted-expired");
    mkdirSync(dir);
    const rig = await startRig(dir);
    try {
      await rig.bot.start();
      const held = new Promise<void>((resolve) =>
        rig.proxy.arm({
          matches: (call) => call.method === "chat.postMessage" && cardAskId(call.params.blocks) !== undefined,
          mode: "hold-before",
          holdMs: 5000,
          onHit: () => resolve(),
        }),
      );
      const ts = "1720000000.000001";
      const mention = messageEvent("app_mention", { user: OWNER, text: `<@${FAKE_BOT_USER_ID}> chaos:s1003`, channel: CHAOS_CHANNEL, ts });
      await (await rig.sender.event(mention, { teamId: "T_PARLEY", eventId: `Ev_${ts}` })).text();
      await held;
      // Killed after the ask was committed and while its card was on its way: Slack never got it.
      await rig.bot.kill();
      const ask = readAsks(rig.databasePath)[0];
      expect(ask?.status).toBe("pending");
      expect(ask?.card_ref).toBeNull();
      // The bot stays down past the deadline, then starts and recovers.
      await sleep(Math.max(0, (ask?.deadline ?? 0) - Date.now()) + 500);
      const restartedAt = Date.now();
      await rig.bot.start();
      const cardPosts = () => rig.slack.callsOf("chat.postMessage").filter((call) => call.ok && cardAskId(call.params.blocks) === ask?.id);
      while (Date.now() - restartedAt < 8000 && cardPosts().length === 0) await sleep(100);
      await sleep(1500);
      await rig.bot.stop();

      const after = readAsks(rig.databasePath)[0];
      // Nobody saw this question before its deadline, so it must not time out unseen: the card is posted on start,
      // and the question gets its whole time from then (the card's "expires" line says so).
      expect(cardPosts()).toHaveLength(1);
      expect(after?.status).toBe("pending");
      expect(after?.card_ref).toEqual(expect.any(String));
      expect(after?.deadline ?? 0).toBeGreaterThanOrEqual(restartedAt + 6000);
    } finally {
      await rig.close();
    }
  }, 60_000);
});

function readAsks(path: string): AskRow[] {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT * FROM asks ORDER BY created_at").all() as AskRow[];
  } finally {
    db.close();
  }
}
