import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { reply } from "../fakes/fake-anthropic.js";
import { FAKE_BOT_USER_ID } from "../fakes/fake-slack-api.js";
import { ALICE, SlackHarness } from "./slack-harness.js";
import { messageEvent, nextTs } from "./slack-payloads.js";

let harness: SlackHarness;
let slept: number[];

beforeEach(async () => {
  slept = [];
  harness = await new SlackHarness({
    // No real waiting, no jitter: the schedule is exactly 5, 10 … s.
    modelRetry: { sleep: async (ms) => void slept.push(ms), random: () => 0.5 },
  }).start();
});

afterEach(async () => {
  await harness.close();
});

describe("a busy model, as a Slack thread shows it", () => {
  it("the status message says Claude is busy and when it retries, then the answer is posted once", async () => {
    harness.anthropic.script({ status: 529, error: "Overloaded" }, { status: 529, error: "Overloaded" }, reply("Here is the summary."));
    const ts = nextTs();
    await harness.sender.event(messageEvent("app_mention", { user: ALICE, text: `<@${FAKE_BOT_USER_ID}> summarise`, ts }), {
      teamId: "T_PARLEY",
      eventId: "Ev-busy",
    });
    await harness.settle("handleMessage", 1);

    expect(harness.anthropic.requests).toHaveLength(3);
    const status = harness.posted(ts).find((call) => JSON.stringify(call.params.blocks ?? "").includes("stop:"))!;
    const shown = [status, ...harness.updatesOf(String(status.result.ts))].map((call) => String(call.params.text));
    expect(shown).toEqual(
      expect.arrayContaining([
        expect.stringContaining("Claude is busy (overloaded, 529); retrying in 5 s (attempt 2)"),
        expect.stringContaining("Claude is busy (overloaded, 529); retrying in 10 s (attempt 3)"),
      ]),
    );
    // The status line became the answer: one message, no "Done" edit, no Stop button left.
    const drawn = harness.drawn(ts);
    expect(drawn.map((message) => String(message.params.text))).toEqual(["Here is the summary."]);
    expect(drawn[0]!.ts).toBe(String(status.result.ts));
    expect(slept.reduce((sum, ms) => sum + ms, 0)).toBe(15_000);
  });
});
