import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import type { BotProcess } from "./bot-process.js";
import { betweenOf, prng } from "./chaos-common.js";
import { SHORT_TIMEOUT_S } from "./chaos-model.js";
import { DiscordChaosDriver } from "./discord-driver.js";
import { checkDiscordRun } from "./discord-invariants.js";
import { killMoment, pickKillMode } from "./discord-kill-moments.js";
import { DISCORD_OWNER, startDiscordRig } from "./discord-rig.js";
import { sleep } from "./slack-proxy.js";

/**
 * Issue 15, the crash suite on Discord: the real bot (`node --import tsx src/main.ts`) on Discord only, against
 * the fake Discord (REST behind a chaos proxy, the gateway direct) and the fake model, SIGKILLed CHAOS_KILLS times
 * at random moments and at the interesting ones (discord-kill-moments.ts), restarted each time. The people
 * (discord-driver.ts) mention the bot, write again in finished threads, tap cards, and go on writing while the
 * bot is down: a new gateway session replays nothing, so those messages are seen only if the bot catches up.
 * With the bot stopped, the database and what Discord holds are checked (discord-invariants.ts, invariants.ts).
 * CHAOS_KILLS sets the kill count (12 by default; `npm run test:chaos` runs 200), CHAOS_KEEP=1 keeps the files.
 */

const KILLS = Math.max(1, Number(process.env.CHAOS_KILLS ?? "12") || 12);
const ACTIVE_SESSIONS = KILLS >= 100 ? 8 : 5;
const SEED = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000);
/** A cap, not a target: start-up is ~4 s on a 2-core machine, an epoch ~4.5 s on average, plus the drain. */
const TIMEOUT_MS = 120_000 + KILLS * 10_000;
const DRAIN_MS = 90_000;

const workDir = mkdtempSync(join(tmpdir(), "parley-discord-chaos-"));

afterAll(() => {
  if (process.env.CHAOS_KEEP !== "1") rmSync(workDir, { recursive: true, force: true });
});

describe("crash anywhere, on Discord (issue 15)", () => {
  it(
    `loses no message or ask and doubles nothing across ${KILLS} SIGKILLs of the real bot on Discord`,
    async () => {
      const started = Date.now();
      const random = prng(SEED);
      const between = betweenOf(random);
      const dir = join(workDir, "soak");
      mkdirSync(dir);
      const rig = await startDiscordRig(dir);
      const { anthropic, discord, proxy, model, bot, databasePath, logPath } = rig;
      let readySince: number | undefined;
      const driver = new DiscordChaosDriver({
        discord,
        databasePath,
        activeSessions: ACTIVE_SESSIONS,
        readySince: () => readySince,
        random,
      });
      const modesRun = new Map<string, number>();
      const timeline: Array<{ at: number; event: string }> = [];
      const mark = (event: string) => timeline.push({ at: Date.now(), event });
      const startBot = async () => {
        await rig.startBot();
        readySince = Date.now();
        mark(`epoch ${bot.epoch} ready`);
      };
      const killBot = async () => {
        readySince = undefined;
        await bot.kill();
      };

      let kills = 0;
      let finalExit: Awaited<ReturnType<BotProcess["stop"]>>;
      try {
        for (; kills < KILLS; kills++) {
          await startBot();
          if (kills === 0) driver.start();
          const mode = await killMoment(pickKillMode(random), { rig, driver, random });
          await killBot();
          mark(`kill ${kills + 1}: ${mode}`);
          // People go on writing while the bot is down; the restart delay also lets the fakes read whatever the
          // dead process had already sent, so every request is counted against the process that sent it.
          driver.actWhileDown();
          await sleep(between(150, 600) + (mode.endsWith("+outage") ? SHORT_TIMEOUT_S * 1000 : 0));
          proxy.disarm();
          model.disarm();
          driver.afterDelivery = undefined;
          modesRun.set(mode, (modesRun.get(mode) ?? 0) + 1);
          if (bot.exits.at(-1)?.unexpected) break;
        }

        // No more kills: let every session run to its end, then stop the bot gracefully.
        driver.draining = true;
        await startBot();
        const drainStarted = Date.now();
        while (!driver.settled() && Date.now() - drainStarted < DRAIN_MS) await sleep(200);
        await sleep(500);
        await driver.stop();
        finalExit = await bot.stop();
        readySince = undefined;
      } finally {
        await driver.stop();
        await killBot();
      }

      const report = checkDiscordRun({
        databasePath,
        discord,
        restCalls: proxy.calls,
        modelRequests: anthropic.requests,
        modelCalls: model.calls,
        taps: driver.taps,
        owner: DISCORD_OWNER.id,
        toolRecords: rig.toolRecords(),
      });
      const log = readFileSync(logPath, "utf8");
      const errorLines = log.split("\n").filter((line) => /"level":(50|60)/.test(line) || /unhandled|uncaught/i.test(line));
      const unexpectedExits = bot.exits.filter((exit) => exit.unexpected);
      const summary = {
        platform: "discord",
        seed: SEED,
        kills,
        killModes: Object.fromEntries([...modesRun].sort()),
        epochs: bot.epoch,
        wallSeconds: Math.round((Date.now() - started) / 1000),
        driver: driver.counts,
        unsettledAtEnd: [...driver.sessions.values()].filter((session) => !session.done).map((session) => session.label),
        finalExit: finalExit ? { code: finalExit.code, signal: finalExit.signal } : undefined,
        proxyDroppedHeldRequests: proxy.dropped,
        ...report.stats,
        botErrorLines: errorLines.length,
        /** Lost or doubled asks and answers, sessions left running, cards never shown, an unsound file: all asserted 0. */
        violations: report.violations.length,
        findings: report.findings,
      };
      console.log(`[chaos] ${JSON.stringify(summary, null, 2)}`);
      if (errorLines.length > 0) console.log(`[chaos] bot error lines (first 10):\n${errorLines.slice(0, 10).join("\n")}`);
      if (report.violations.length > 0) console.log(`[chaos] violations (first 40):\n${report.violations.slice(0, 40).join("\n")}`);

      if (process.env.CHAOS_KEEP === "1") {
        console.log(`[chaos] kept ${dir}`);
        writeFileSync(join(dir, "summary.json"), JSON.stringify({ summary, violations: report.violations }, null, 1));
        writeFileSync(join(dir, "discord-calls.json"), JSON.stringify(proxy.calls, null, 1));
        writeFileSync(join(dir, "timeline.json"), JSON.stringify(timeline, null, 1));
        writeFileSync(join(dir, "proxy-log.json"), JSON.stringify(proxy.log, null, 1));
      }
      await rig.close();

      expect(unexpectedExits, `the bot crashed by itself; see ${logPath} (CHAOS_KEEP=1 keeps it)`).toEqual([]);
      expect(kills).toBe(KILLS);
      expect(report.stats.asks).toBeGreaterThan(0);
      expect(report.violations).toEqual([]);
      // Issue 15's figures that must be 0 on every platform.
      expect({
        lostMentions: report.stats.lostMentions,
        lostReplies: report.stats.lostReplies,
        duplicateCardPosts: report.stats.duplicateCardPosts,
        duplicateFinalAnswers: report.stats.duplicateFinalAnswers,
        lostFinalAnswers: report.stats.lostFinalAnswers,
        endedCardsLeftLive: report.stats.endedCardsLeftLive,
      }).toEqual({
        lostMentions: 0,
        lostReplies: 0,
        duplicateCardPosts: 0,
        duplicateFinalAnswers: 0,
        lostFinalAnswers: 0,
        endedCardsLeftLive: 0,
      });
      const reopened = new Database(databasePath, { readonly: true });
      expect(reopened.pragma("quick_check", { simple: true })).toBe("ok");
      reopened.close();
    },
    TIMEOUT_MS,
  );
});
