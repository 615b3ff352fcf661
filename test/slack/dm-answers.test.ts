import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DIRECT_ANSWER_HINT } from "../../src/engine/message-router.js";
import { ask, lastToolResults, reply } from "../fakes/fake-anthropic.js";
import { ALICE, SlackHarness, waitFor } from "./slack-harness.js";
import { DM_CHANNEL, messageEvent, nextTs, tapCard } from "./slack-payloads.js";

/** Issue 11: in a Slack DM, people answer below the card rather than in its thread; that must never open a second session. */
let harness: SlackHarness;
let eventCounter = 0;

beforeEach(async () => {
  harness = await new SlackHarness().start();
});

afterEach(async () => {
  await harness.close();
});

async function dm(text: string, ts = nextTs()): Promise<string> {
  await harness.sender.event(messageEvent("message", { user: ALICE, text, channel: DM_CHANNEL, channelType: "im", ts }), {
    teamId: "T_PARLEY",
    eventId: `EvDm${++eventCounter}`,
  });
  return ts;
}

describe("a top-level DM message while a question waits", () => {
  it("is not a valid answer: the person is told how to answer, no second session starts, the question still works", async () => {
    harness.anthropic.script(ask({ type: "confirm", question: "Restart the staging database?" }), reply("Restarted."));
    const thread = await dm("restart staging");
    await harness.settle("handleMessage", 1);
    const card = harness.card(thread);

    // "maybe later" is not yes or no; "deploy prod" is a new request the question cannot take. Both go to the question.
    await dm("maybe later");
    await dm("deploy prod");
    const outcomes = await harness.settle("handleMessage", 3);
    expect(outcomes.slice(1).map((call) => call.result)).toEqual(["rejected", "rejected"]);
    expect(await harness.noticesTo(ALICE, 2)).toEqual([
      `Answer yes or no. ${DIRECT_ANSWER_HINT}`,
      `Answer yes or no. ${DIRECT_ANSWER_HINT}`,
    ]);
    // The notices sit below the card, where the question is; nothing asked the model again or posted a second card.
    expect(harness.slack.callsOf("chat.postEphemeral").every((call) => call.params.thread_ts === thread)).toBe(true);
    expect(harness.anthropic.requests).toHaveLength(1);
    expect(
      harness.slack.callsOf("chat.postMessage").filter((call) => JSON.stringify(call.params.blocks ?? "").includes("Restart the")),
    ).toHaveLength(1);

    // The question is still open, and a valid top-level reply answers it.
    await dm("yes");
    expect((await harness.settle("handleMessage", 4)).at(-1)?.result).toBe("answered");
    await waitFor(() => harness.posted(thread).some((call) => call.params.text === "Restarted."), "the answer in the first thread");
    expect(JSON.parse(lastToolResults(harness.anthropic.requests.at(-1))[0]!.content)).toEqual({ ok: true, value: true });
    expect(JSON.stringify(harness.updatesOf(card.ts).at(-1)!.params.blocks)).toContain(`Yes — answered by <@${ALICE}>`);
  });

  it("starts a session again once the question has ended", async () => {
    harness.anthropic.script(ask({ type: "confirm", question: "Restart the staging database?" }), reply("Left it."), reply("Deploying."));
    const thread = await dm("restart staging");
    await harness.settle("handleMessage", 1);
    await tapCard(harness.sender, {
      card: harness.card(thread),
      thread,
      user: ALICE,
      button: 1,
      channel: DM_CHANNEL,
      responseUrl: harness.responseUrl,
    });
    await harness.settle("answer", 1);
    const next = await dm("deploy prod");
    expect((await harness.settle("handleMessage", 2)).at(-1)?.result).toBe("started");
    await waitFor(() => harness.posted(next).some((call) => call.params.text === "Deploying."), "the new request in its own thread");
  });
});
