import { betweenOf, waitForHit } from "./chaos-common.js";
import { LET_EXPIRE, SHORT_TIMEOUT_S } from "./chaos-model.js";
import type { DiscordChaosDriver } from "./discord-driver.js";
import { type DiscordCall, discordCardAskId } from "./discord-proxy.js";
import type { DiscordChaosRig } from "./discord-rig.js";
import { sleep } from "./slack-proxy.js";

/**
 * When a Discord run kills the bot:
 * - card-post: a card's REST post is held; killed before Discord sees it (hold-before; sometimes followed by an
 *   outage longer than a short ask's deadline) or after Discord created it but before the bot learned its id (hold-after);
 * - after-tap: right after Discord received an interaction's acknowledgement (the deferUpdate callback);
 * - after-delivery: right after the gateway delivered a person's message to the bot (nothing acknowledges it);
 * - mid-model: the fake model holds its answer;
 * - claim-resume: the settle of a card (its PATCH) is held: the claim is committed, the resumed turn not started;
 * - mid-sweep: the settle of an expiring [let-expire] card is held (the sweeper's claim), or a moment around it;
 * - recovery: within 250 ms of Discord being ready, while recover() runs; random: anywhere;
 * - approve-run: right after an Approve tap's acknowledgement, between the approval and the tool's execution;
 * - mid-tool: while a tool call of the chaos MCP server is running.
 */
export type DiscordKillMode =
  | "random"
  | "card-post"
  | "after-tap"
  | "after-delivery"
  | "mid-model"
  | "claim-resume"
  | "mid-sweep"
  | "recovery"
  | "approve-run"
  | "mid-tool";

const WEIGHTS: Array<[DiscordKillMode, number]> = [
  ["random", 14],
  ["card-post", 18],
  ["after-tap", 12],
  ["after-delivery", 12],
  ["mid-model", 12],
  ["claim-resume", 10],
  ["mid-sweep", 8],
  ["recovery", 8],
  ["approve-run", 6],
  ["mid-tool", 6],
];

const MESSAGES = /^\/channels\/\d+\/messages$/;
const ONE_MESSAGE = /^\/channels\/\d+\/messages\/(\d+)$/;
const CALLBACK = /^\/interactions\/(\d+)\/[^/]+\/callback$/;

const isCardPost = (call: DiscordCall) =>
  call.verb === "POST" && MESSAGES.test(call.path) && discordCardAskId(call.body.components) !== undefined;

export function pickKillMode(random: () => number): DiscordKillMode {
  const total = WEIGHTS.reduce((sum, [, weight]) => sum + weight, 0);
  let roll = random() * total;
  for (const [mode, weight] of WEIGHTS) {
    roll -= weight;
    if (roll < 0) return mode;
  }
  return "random";
}

/** Waits for this epoch's kill moment of `mode`; returns the label of what actually happened. */
export async function killMoment(
  mode: DiscordKillMode,
  context: { rig: DiscordChaosRig; driver: DiscordChaosDriver; random: () => number },
): Promise<string> {
  const { rig, driver, random } = context;
  const between = betweenOf(random);
  const holdOn = (matches: (call: DiscordCall) => boolean, mode: "hold-before" | "hold-after", holdMs: number, limitMs: number) =>
    waitForHit((onHit) => rig.proxy.arm({ matches, mode, holdMs, onHit }), limitMs);
  const cardMessages = (filter: (call: DiscordCall) => boolean = () => true) =>
    new Set(rig.proxy.calls.filter((call) => isCardPost(call) && filter(call)).map((call) => String((call.result as { id?: unknown }).id)));
  const isSettleOf = (ids: ReadonlySet<string>) => (call: DiscordCall) =>
    call.verb === "PATCH" && ids.has(ONE_MESSAGE.exec(call.path)?.[1] ?? "");

  switch (mode) {
    case "random":
      await sleep(between(200, 2000));
      return mode;
    case "recovery":
      await sleep(between(0, 250));
      return mode;
    case "card-post": {
      const hold = random() < 0.5 ? "hold-before" : "hold-after";
      let letExpire = false;
      const hit = await holdOn(
        (call) => {
          const matches = isCardPost(call);
          if (matches) letExpire = String(call.body.content ?? "").includes(LET_EXPIRE);
          return matches;
        },
        hold,
        1500,
        3000,
      );
      if (hit) await sleep(between(10, 400));
      // A short-deadline card that never reached Discord, and an outage longer than its deadline.
      if (hit && hold === "hold-before" && letExpire) return "card-post(hold-before)+outage";
      return hit ? `card-post(${hold})` : "card-post(missed)";
    }
    case "after-tap": {
      const hit = await holdOn((call) => call.verb === "POST" && CALLBACK.test(call.path), "hold-after", 500, 2500);
      if (hit) await sleep(between(0, 20));
      return hit ? mode : "after-tap(missed)";
    }
    case "approve-run": {
      const approve = (call: DiscordCall) => driver.approveInteractions.has(CALLBACK.exec(call.path)?.[1] ?? "");
      const hit = await holdOn((call) => call.verb === "POST" && approve(call), "hold-after", 500, 4000);
      if (hit) await sleep(between(0, 30));
      return hit ? mode : "approve-run(missed)";
    }
    case "after-delivery": {
      const hit = await waitForHit((onHit) => (driver.afterDelivery = onHit), 4000);
      if (hit) await sleep(between(0, 25));
      return hit ? mode : "after-delivery(missed)";
    }
    case "mid-tool": {
      const starts = () => rig.toolRecords().filter((line) => line.startsWith("start ")).length;
      const before = starts();
      const deadline = Date.now() + 5000;
      while (starts() === before && Date.now() < deadline) await sleep(15);
      const hit = starts() > before;
      if (hit) await sleep(between(0, 300));
      return hit ? mode : "mid-tool(missed)";
    }
    case "mid-model": {
      const hit = await waitForHit((onHit) => rig.model.arm({ holdMs: 2500, onHit }), 3000);
      if (hit) await sleep(between(10, 600));
      return hit ? mode : "mid-model(missed)";
    }
    case "claim-resume": {
      // The settle (a PATCH of the card) runs after the claim commits and before the resumed turn starts.
      const hit = await holdOn(isSettleOf(cardMessages()), "hold-before", 800, 3000);
      if (hit) await sleep(between(0, 60));
      return hit ? mode : "claim-resume(missed)";
    }
    case "mid-sweep": {
      // A [let-expire] card expires within one sweep (5 s) after its deadline; its settle is the sweeper's claim landing.
      const expiring = rig.proxy.calls.filter((call) => isCardPost(call) && String(call.body.content ?? "").includes(LET_EXPIRE));
      const latest = Math.max(0, ...expiring.map((call) => call.at));
      const window = latest + SHORT_TIMEOUT_S * 1000 + 5500 - Date.now();
      if (window <= 0) return killMoment("claim-resume", context);
      const ids = cardMessages((call) => String(call.body.content ?? "").includes(LET_EXPIRE));
      const hit = await holdOn(isSettleOf(ids), "hold-before", 800, Math.min(window, 9000));
      if (hit) await sleep(between(0, 60));
      return hit ? mode : "mid-sweep(timed)";
    }
  }
}
