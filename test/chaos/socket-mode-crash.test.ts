import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { FAKE_APP_TOKEN } from "../fakes/fake-slack-api.js";
import type { ExitRecord } from "./bot-process.js";
import { betweenOf, prng, waitForHit } from "./chaos-common.js";
import { ChaosDriver, OWNER } from "./driver.js";
import { checkInvariants } from "./invariants.js";
import { RedeliveringSlackSocket } from "./redelivering-slack-socket.js";
import { startRig } from "./rig.js";
import { cardAskId, sleep } from "./slack-proxy.js";
import { SocketModeSender } from "./socket-mode-sender.js";

/**
 * Issue 15, "Add Socket Mode runs to the crash suite": the real bot in Slack Socket Mode (SLACK_APP_TOKEN) against
 * a Socket Mode endpoint that redelivers like Slack (redelivering-slack-socket.ts), its mentions, taps and commands
 * sent as envelopes by the same chaos driver, SIGKILLed CHAOS_KILLS times (12 by default, 200 in `npm run
 * test:chaos`) and restarted. Kill moments:
 * - before-ack: a mention's envelope was sent and the author lookup is held, so it is neither stored nor acked;
 *   Slack must redeliver it (`retry_attempt` 1) to the next connection and the bot must store it once;
 * - after-ack: right after a mention's envelope was acked (the ack must come after the store, so nothing is lost);
 * - after-tap, card-post (held before or after Slack), mid-model, recovery and random, as in crash-anywhere.
 * Then the same invariants as the HTTP run, and no lost mention.
 */

const KILLS = Math.max(1, Number(process.env.CHAOS_KILLS ?? "12") || 12);
const ACTIVE_SESSIONS = KILLS >= 100 ? 8 : 5;
const SEED = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000);
/** A cap, not a target: an epoch takes 8 s on an idle 2-core machine and 15 s or more on a loaded one. */
const TIMEOUT_MS = 150_000 + KILLS * 12_000;
const DRAIN_MS = 90_000;

type KillMode = "random" | "before-ack" | "after-ack" | "after-tap" | "card-post" | "mid-model" | "recovery";
const MODES: Array<[KillMode, number]> = [
  ["random", 16],
  ["before-ack", 18],
  ["after-ack", 18],
  ["after-tap", 14],
  ["card-post", 14],
  ["mid-model", 12],
  ["recovery", 8],
];
/** The first kills are aimed, so even a short run kills once before and once after an envelope's ack. */
const FIRST_MODES: KillMode[] = ["before-ack", "after-ack"];

const workDir = mkdtempSync(join(tmpdir(), "parley-chaos-socket-"));

afterAll(() => {
  if (process.env.CHAOS_KEEP !== "1") rmSync(workDir, { recursive: true, force: true });
});

describe("crash anywhere in Slack Socket Mode (issue 15)", () => {
  it(
    `loses no mention, no ask and doubles no answer across ${KILLS} SIGKILLs of the real bot on Socket Mode`,
    async () => {
      const started = Date.now();
      const random = prng(SEED);
      const between = betweenOf(random);
      const dir = join(workDir, "soak");
      mkdirSync(dir);
      const socket = await new RedeliveringSlackSocket().start();
      const rig = await startRig(dir, { SLACK_APP_TOKEN: FAKE_APP_TOKEN });
      rig.slack.socketUrl = socket.url;
      const { anthropic, slack, proxy, model, bot, databasePath, logPath } = rig;
      const driver = new ChaosDriver({
        sender: new SocketModeSender(socket),
        slack,
        databasePath,
        activeSessions: ACTIVE_SESSIONS,
        epoch: () => bot.epoch,
        // People act once the app is connected; before that Slack would only show them an error.
        botUp: () => bot.healthy && socket.connected,
        random,
      });
      const modesRun = new Map<string, number>();
      const count = (mode: string) => modesRun.set(mode, (modesRun.get(mode) ?? 0) + 1);
      // The author lookup (users.info) comes before the store; holding it keeps a mention unstored, so unacked.
      const holdAuthorLookup = (holdMs: number) =>
        proxy.arm({ matches: (call) => call.method === "users.info", mode: "hold-before", holdMs, onHit: () => undefined });

      /** Arms this epoch's kill moment at once (before the driver's first send) and waits for it. */
      const killMoment = async (mode: KillMode): Promise<string> => {
        switch (mode) {
          case "random":
            await sleep(between(200, 2000));
            return mode;
          case "recovery":
            await sleep(between(0, 250));
            return mode;
          case "before-ack": {
            // Held well under the ack gate's 2 s, so the ack still waits for the store the kill prevents.
            holdAuthorLookup(1200);
            const hit = await waitForHit((onHit) => {
              socket.onSend = (type) => {
                if (type !== "events_api") return;
                socket.onSend = undefined;
                onHit();
              };
            }, 5000);
            if (hit) await sleep(between(0, 300));
            return hit ? mode : "before-ack(missed)";
          }
          case "after-ack": {
            holdAuthorLookup(500);
            const hit = await waitForHit((onHit) => {
              socket.onAck = (type) => {
                if (type !== "events_api") return;
                socket.onAck = undefined;
                onHit();
              };
            }, 5000);
            if (hit) await sleep(between(0, 20));
            return hit ? mode : "after-ack(missed)";
          }
          case "after-tap": {
            const hit = await waitForHit((onHit) => (driver.afterTap = onHit), 2500);
            if (hit) await sleep(between(0, 20));
            return hit ? mode : "after-tap(missed)";
          }
          case "card-post": {
            const hold = random() < 0.5 ? "hold-before" : "hold-after";
            const hit = await waitForHit(
              (onHit) =>
                proxy.arm({
                  matches: (call) => call.method === "chat.postMessage" && cardAskId(call.params.blocks) !== undefined,
                  mode: hold,
                  holdMs: 1500,
                  onHit,
                }),
              3000,
            );
            if (hit) await sleep(between(10, 400));
            return hit ? `card-post(${hold})` : "card-post(missed)";
          }
          case "mid-model": {
            const hit = await waitForHit((onHit) => model.arm({ holdMs: 2500, onHit }), 3000);
            if (hit) await sleep(between(10, 600));
            return hit ? mode : "mid-model(missed)";
          }
        }
      };

      const pickMode = (kill: number): KillMode => {
        const first = FIRST_MODES[kill];
        if (first) return first;
        const total = MODES.reduce((sum, [, weight]) => sum + weight, 0);
        let roll = random() * total;
        for (const [mode, weight] of MODES) {
          roll -= weight;
          if (roll < 0) return mode;
        }
        return "random";
      };

      /** Milliseconds from /healthz answering to the Socket Mode connection, per epoch. */
      const connectDelays: number[] = [];
      let kills = 0;
      let finalExit: ExitRecord | undefined;
      try {
        for (; kills < KILLS; kills++) {
          await bot.start();
          const upAt = Date.now();
          while (!socket.connected && Date.now() - upAt < 10_000) await sleep(10);
          connectDelays.push(Date.now() - upAt);
          const moment = killMoment(pickMode(kills));
          if (kills === 0) driver.start();
          const mode = await moment;
          await bot.kill();
          await sleep(between(100, 300));
          proxy.disarm();
          model.disarm();
          socket.onSend = undefined;
          socket.onAck = undefined;
          driver.afterTap = undefined;
          count(mode);
          if (bot.exits.at(-1)?.unexpected) break;
        }
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
      const summary = {
        mode: "slack-socket-mode",
        seed: SEED,
        kills,
        killModes: Object.fromEntries([...modesRun].sort()),
        epochs: bot.epoch,
        wallSeconds: Math.round((Date.now() - started) / 1000),
        driver: driver.counts,
        socket: { ...socket.counts, slowestConnectMs: Math.max(0, ...connectDelays) },
        unsettledAtEnd: [...driver.sessions.values()].filter((session) => !session.done).map((session) => session.label),
        finalExit: finalExit ? { code: finalExit.code, signal: finalExit.signal } : undefined,
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
      }
      await rig.close();
      await socket.close();

      expect(
        bot.exits.filter((exit) => exit.unexpected),
        `the bot crashed by itself; see ${logPath}`,
      ).toEqual([]);
      expect(kills).toBe(KILLS);
      expect(report.stats.asks).toBeGreaterThan(0);
      // The bot reached Slack through Socket Mode only, once per epoch at least.
      expect(socket.counts.connections).toBeGreaterThanOrEqual(bot.epoch);
      // A kill before an ack happened and Slack redelivered that envelope.
      if ((modesRun.get("before-ack") ?? 0) > 0) expect(socket.counts.redeliveries).toBeGreaterThan(0);
      expect(driver.counts.lostMentions).toBe(0);
      expect(report.violations).toEqual([]);
      const reopened = new Database(databasePath, { readonly: true });
      expect(reopened.pragma("quick_check", { simple: true })).toBe("ok");
      reopened.close();
    },
    TIMEOUT_MS,
  );
});
