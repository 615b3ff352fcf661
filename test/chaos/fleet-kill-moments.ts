import { waitForHit } from "./chaos-common.js";
import { LET_EXPIRE, SHORT_TIMEOUT_S } from "./chaos-model.js";
import type { ChaosDriver } from "./driver.js";
import type { FleetChaosRig, FleetMember } from "./fleet-chaos-rig.js";
import { cardAskId, sleep } from "./slack-proxy.js";

export type FleetKillMode =
  | "random"
  | "card-post"
  | "after-tap"
  | "after-mention"
  | "mid-model"
  | "claim-resume"
  | "mid-sweep"
  | "recovery"
  | "approve-run"
  | "mid-tool"
  | "two-at-once"
  | "whole-fleet";

/** How often each moment is chosen: the Slack suite's, plus two fleet ones (several processes killed together). */
export const FLEET_MODES: Array<[FleetKillMode, number]> = [
  ["random", 14],
  ["card-post", 18],
  ["after-tap", 14],
  ["mid-model", 14],
  ["claim-resume", 10],
  ["mid-sweep", 8],
  ["recovery", 8],
  ["after-mention", 6],
  ["approve-run", 8],
  ["mid-tool", 8],
  ["two-at-once", 6],
  ["whole-fleet", 3],
];

/** A moment reached: its label (with `(missed)` when nothing matched in time) and the processes to kill now. */
export interface KillMoment {
  label: string;
  victims: FleetMember[];
}

/**
 * Waits for the moment `mode` aims at and names the process it concerns: the one whose Slack call is held (its own
 * chaos proxy saw it), whose model call is held (its model key), that acknowledged the tap (the balancer routed it
 * there), that runs the tool (its own tool record), or that is starting (recovery). A moment that does not come in
 * time falls back to a random live process.
 */
export class FleetKillMoments {
  constructor(
    private readonly rig: FleetChaosRig,
    private readonly driver: ChaosDriver,
    private readonly random: () => number,
  ) {}

  pick(): FleetKillMode {
    const total = FLEET_MODES.reduce((sum, [, weight]) => sum + weight, 0);
    let roll = this.random() * total;
    for (const [mode, weight] of FLEET_MODES) {
      roll -= weight;
      if (roll < 0) return mode;
    }
    return "random";
  }

  /** Clears every trap and hook a moment may have left armed. */
  disarm(): void {
    this.rig.disarmSlack();
    this.rig.model.disarm();
    this.driver.afterTap = undefined;
    this.driver.afterApprove = undefined;
    this.driver.afterMention = undefined;
  }

  async reach(mode: FleetKillMode): Promise<KillMoment> {
    const { rig, driver } = this;
    switch (mode) {
      case "random":
        await sleep(this.between(200, 2000));
        return this.moment(mode, [this.anyLive()]);
      case "two-at-once":
        await sleep(this.between(200, 2000));
        return this.moment(mode, this.shuffledLive().slice(0, 2));
      case "whole-fleet":
        await sleep(this.between(200, 2000));
        return this.moment(mode, this.shuffledLive());
      case "recovery": {
        // A process that is starting: killed within 250 ms of answering /healthz, while recover() runs.
        const starting = rig.members.find((member) => member.starting !== undefined);
        if (!starting) return this.reach("random").then((moment) => ({ ...moment, label: "recovery(none starting)" }));
        await starting.starting;
        await sleep(this.between(0, 250));
        return starting.healthy ? this.moment(mode, [starting]) : this.reach("random");
      }
      case "card-post": {
        const hold = this.random() < 0.5 ? "hold-before" : "hold-after";
        let heldBy: FleetMember | undefined;
        const hit = await waitForHit(
          (onHit) =>
            rig.armSlack(
              {
                matches: (call) => call.method === "chat.postMessage" && cardAskId(call.params.blocks) !== undefined,
                mode: hold,
                holdMs: 1500,
              },
              (member) => {
                heldBy = member;
                onHit();
              },
            ),
          3000,
        );
        if (hit) await sleep(this.between(10, 400));
        return hit ? this.moment(`card-post(${hold})`, [heldBy]) : this.missed(mode);
      }
      case "after-tap":
      case "approve-run": {
        const hit = await waitForHit((onHit) => {
          if (mode === "after-tap") driver.afterTap = onHit;
          else driver.afterApprove = onHit;
        }, 4000);
        const acknowledger = rig.latestAcknowledger();
        if (hit) await sleep(this.between(0, mode === "after-tap" ? 20 : 30));
        return hit ? this.moment(mode, [acknowledger]) : this.missed(mode);
      }
      case "after-mention": {
        // Bolt acks an event before its listener runs; the author lookup (users.info) is held so the kill lands
        // between the 200 and the stored message whenever the lookup is not cached.
        let heldBy: FleetMember | undefined;
        rig.armSlack({ matches: (call) => call.method === "users.info", mode: "hold-before", holdMs: 500 }, (member) => {
          heldBy = member;
        });
        const hit = await waitForHit((onHit) => (driver.afterMention = onHit), 4000);
        const acknowledger = heldBy ?? rig.latestAcknowledger();
        if (hit) await sleep(this.between(0, 20));
        return hit ? this.moment(mode, [acknowledger]) : this.missed(mode);
      }
      case "mid-model": {
        let caller: FleetMember | undefined;
        const hit = await waitForHit(
          (onHit) =>
            rig.model.arm({
              holdMs: 2500,
              onHit: () => {
                caller = rig.memberOfLife(rig.lifeOf(rig.anthropic.requests.at(-1)));
                onHit();
              },
            }),
          3000,
        );
        if (hit) await sleep(this.between(10, 600));
        return hit ? this.moment(mode, [caller]) : this.missed(mode);
      }
      case "mid-tool": {
        const before = rig.members.map((member) => rig.toolStarts(member));
        const deadline = Date.now() + 5000;
        let runner: FleetMember | undefined;
        while (!runner && Date.now() < deadline) {
          await sleep(15);
          runner = rig.members.find((member, index) => rig.toolStarts(member) > (before[index] ?? 0));
        }
        if (runner) await sleep(this.between(0, 300));
        return runner ? this.moment(mode, [runner]) : this.missed(mode);
      }
      case "claim-resume": {
        // The settle (chat.update of a card) runs after the claim commits and before the resumed turn starts.
        const cards = this.cardTs();
        return this.heldUpdate(mode, (ts) => cards.has(ts), 3000);
      }
      case "mid-sweep": {
        // A [let-expire] card posted lately expires within one sweep interval (5 s) after its deadline; its settle
        // is a sweeper's claim landing, on whichever process swept first.
        const latest = Math.max(
          0,
          ...rig
            .slackLog()
            .filter((entry) => entry.askId !== undefined && entry.text?.includes(LET_EXPIRE))
            .map((entry) => entry.at),
        );
        const window = latest + SHORT_TIMEOUT_S * 1000 + 5500 - Date.now();
        if (window <= 0) return this.reach("claim-resume");
        const expiring = new Set(
          rig.slack
            .callsOf("chat.postMessage")
            .flatMap((call) => (String(call.params.text ?? "").includes(LET_EXPIRE) ? [String(call.result.ts)] : [])),
        );
        return this.heldUpdate(mode, (ts) => expiring.has(ts), Math.min(window, 9000));
      }
    }
  }

  private async heldUpdate(mode: FleetKillMode, matchesTs: (ts: string) => boolean, limitMs: number): Promise<KillMoment> {
    let heldBy: FleetMember | undefined;
    const hit = await waitForHit(
      (onHit) =>
        this.rig.armSlack(
          { matches: (call) => call.method === "chat.update" && matchesTs(String(call.params.ts)), mode: "hold-before", holdMs: 800 },
          (member) => {
            heldBy = member;
            onHit();
          },
        ),
      limitMs,
    );
    if (hit) await sleep(this.between(0, 60));
    return hit ? this.moment(mode, [heldBy]) : this.missed(mode);
  }

  /** The moment's victims that are still up (a held process may have been killed since); one live process if none. */
  private moment(label: string, victims: Array<FleetMember | undefined>): KillMoment {
    const live = [...new Set(victims)].filter((member): member is FleetMember => member?.healthy === true);
    const fallback = this.anyLive();
    return { label, victims: live.length > 0 ? live : fallback ? [fallback] : [] };
  }

  private missed(mode: FleetKillMode): KillMoment {
    return this.moment(`${mode}(missed)`, [this.anyLive()]);
  }

  private anyLive(): FleetMember | undefined {
    return this.shuffledLive()[0];
  }

  private shuffledLive(): FleetMember[] {
    return this.rig.members
      .filter((member) => member.healthy)
      .map((member) => ({ member, key: this.random() }))
      .sort((left, right) => left.key - right.key)
      .map(({ member }) => member);
  }

  private cardTs(): Set<string> {
    return new Set(
      this.rig.slack.callsOf("chat.postMessage").flatMap((call) => (cardAskId(call.params.blocks) ? [String(call.result.ts)] : [])),
    );
  }

  private between(low: number, high: number): number {
    return low + Math.floor(this.random() * (high - low));
  }
}
