import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../../src/loop/tools.js";
import { ask, lastToolResults, reply, toolUse } from "../fakes/fake-anthropic.js";
import { FAKE_BOT_USER_ID } from "../fakes/fake-slack-api.js";
import { ALICE, actionIdsOf, BOB, CAROL_ADMIN, type PostedCard, SlackHarness, waitFor } from "./slack-harness.js";
import { blockActions, CHANNEL, messageEvent, nextTs } from "./slack-payloads.js";

let harness: SlackHarness;
let eventCounter = 0;
/** Lets a test's blocked tool finish, so a failing test cannot hang the clean-up. */
let releaseBlockedTool: () => void = () => {};

afterEach(async () => {
  releaseBlockedTool();
  await harness.close();
});

async function mention(text: string, user = ALICE): Promise<string> {
  const thread = nextTs();
  await harness.sender.event(messageEvent("app_mention", { user, text: `<@${FAKE_BOT_USER_ID}> ${text}`, ts: thread }), {
    teamId: "T_PARLEY",
    eventId: `EvCtl${++eventCounter}`,
  });
  return thread;
}

function tap(card: PostedCard, thread: string, actionId: string, user = ALICE) {
  return harness.sender.interaction(
    blockActions({ user, actionId, channel: CHANNEL, cardTs: card.ts, threadTs: thread, responseUrl: harness.responseUrl }),
  );
}

function toolResult(): unknown {
  const results = lastToolResults(harness.anthropic.requests.at(-1));
  expect(results).toHaveLength(1);
  return JSON.parse(results[0]!.content);
}

function settledText(card: PostedCard): string {
  return JSON.stringify(harness.updatesOf(card.ts).at(-1)?.params.blocks ?? null);
}

async function confirmCard(): Promise<{ card: PostedCard; thread: string }> {
  harness.anthropic.script(ask({ type: "confirm", question: "Drop the cache?", timeout_s: 5 }), reply("done"));
  const thread = await mention("clean up");
  await harness.settle("handleMessage", 1);
  return { card: harness.card(thread), thread };
}

describe("ending an ask", () => {
  it("Cancel tells the model it was cancelled and settles the card", async () => {
    harness = await new SlackHarness().start();
    const { card, thread } = await confirmCard();
    await tap(card, thread, card.actionIds.find((id) => id.endsWith(":cancel"))!);
    await harness.settle("cancel", 1);
    expect(toolResult()).toEqual({ ok: false, cancelled: true });
    expect(settledText(card)).toContain(`✖️ Cancelled by <@${ALICE}>`);
  });

  it("Stop on a waiting card ends the turn: the question is cancelled and the card settled as stopped, the model not called", async () => {
    harness = await new SlackHarness().start();
    const { card, thread } = await confirmCard();
    const stopId = card.actionIds.at(-1)!;
    expect(stopId).toMatch(/^stop:/);
    await tap(card, thread, stopId, BOB);
    await harness.calls("stop", 1);
    expect(await harness.noticesTo(BOB, 1)).toEqual(["Only the person who started this conversation, or an admin, can stop it."]);
    await tap(card, thread, stopId);
    expect((await harness.calls("stop", 2))[1]!.result).toBe("stopped");
    await harness.engine.idle();
    expect(settledText(card)).toContain(`⏹ Stopped by <@${ALICE}>`);
    expect(actionIdsOf(harness.updatesOf(card.ts).at(-1)!.params.blocks)).toEqual([]);
    expect(harness.anthropic.requests).toHaveLength(1);
  });

  it("an expired ask resumes with timeout and its card says so", async () => {
    let offset = 0;
    harness = await new SlackHarness({ clock: () => Date.now() + offset }).start();
    const { card } = await confirmCard();
    offset = 6_000;
    expect(await harness.engine.sweep()).toBe(1);
    await harness.engine.idle();
    expect(toolResult()).toEqual({ ok: false, timeout: true });
    expect(settledText(card)).toContain("⌛ Expired: nobody answered in time");
  });

  it("Stop on the progress message halts a running turn", async () => {
    let entered: () => void = () => {};
    let release: () => void = () => {};
    const started = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    releaseBlockedTool = release;
    const slowStep = defineTool({
      name: "slow_step",
      description: "A step that takes a while.",
      hints: { readOnly: true },
      input: z.object({}),
      run: async () => {
        entered();
        await gate;
        return "step finished";
      },
    });
    harness = await new SlackHarness({ tools: [slowStep] }).start();
    harness.anthropic.script({ content: [toolUse("slow_step", {})], stopReason: "tool_use" }, reply("never sent"));
    const thread = await mention("run the slow job");
    await started;
    await waitFor(
      () => harness.posted(thread).some((call) => actionIdsOf(call.params.blocks).some((id) => id.startsWith("stop:"))),
      "a Stop button",
    );
    const progress = harness.posted(thread).find((call) => actionIdsOf(call.params.blocks).some((id) => id.startsWith("stop:")))!;
    const stopId = actionIdsOf(progress.params.blocks)[0]!;
    const progressCard = { ts: String(progress.result.ts), askId: "", actionIds: [stopId], blocks: [], text: "" };

    await tap(progressCard, thread, stopId, BOB);
    await harness.calls("stop", 1);
    expect(await harness.noticesTo(BOB, 1)).toEqual(["Only the person who started this conversation, or an admin, can stop it."]);

    await tap(progressCard, thread, stopId);
    expect((await harness.calls("stop", 2))[1]!.result).toBe("stopping");
    release();
    await harness.engine.idle();
    expect(harness.anthropic.requests).toHaveLength(1);
    expect(harness.posted(thread).at(-1)!.params.text).toBe("⏹ Stopped.");
    const lastProgress = harness.updatesOf(progressCard.ts).at(-1)!;
    expect(actionIdsOf(lastProgress.params.blocks)).toEqual([]);
  });
});

describe("who may answer", () => {
  it("a second user's tap and reply consume nothing and get a private notice", async () => {
    harness = await new SlackHarness().start();
    const { card, thread } = await confirmCard();
    await tap(card, thread, card.actionIds[0]!, BOB);
    expect((await harness.settle("answer", 1))[0]!.result).toMatchObject({ kind: "not-allowed" });
    await harness.sender.event(messageEvent("message", { user: BOB, text: "yes", threadTs: thread }), {
      teamId: "T_PARLEY",
      eventId: "EvBob",
    });
    expect((await harness.settle("handleMessage", 2))[1]!.result).toBe("rejected");
    const notice = `Only <@${ALICE}> or an admin can answer or stop this.`;
    expect(await harness.noticesTo(BOB, 2)).toEqual([notice, notice]);
    expect(harness.slack.callsOf("chat.postEphemeral").every((call) => call.params.thread_ts === thread)).toBe(true);
    expect(harness.anthropic.requests).toHaveLength(1);
    expect(harness.updatesOf(card.ts)).toHaveLength(0);

    await tap(card, thread, card.actionIds[0]!);
    await harness.settle("answer", 2);
    expect(toolResult()).toEqual({ ok: true, value: true });
  });

  it("someone else's Answer tap opens no modal and tells them who may answer", async () => {
    harness = await new SlackHarness().start();
    harness.anthropic.script(ask({ type: "input", question: "Release name?" }), reply("named"));
    const thread = await mention("name the release");
    await harness.settle("handleMessage", 1);
    const card = harness.card(thread);
    await tap(card, thread, card.actionIds[0]!, BOB);
    expect(await harness.noticesTo(BOB, 1)).toEqual([`Only <@${ALICE}> or an admin can answer this.`]);
    expect(harness.slack.callsOf("views.open")).toHaveLength(0);
    await tap(card, thread, card.actionIds[0]!);
    await waitFor(() => harness.slack.callsOf("views.open").length === 1, "the owner's modal");
  });

  it("a workspace admin (from users.info) may answer, and the card says so", async () => {
    harness = await new SlackHarness().start();
    const { card, thread } = await confirmCard();
    await tap(card, thread, card.actionIds[0]!, CAROL_ADMIN);
    await harness.settle("answer", 1);
    expect(toolResult()).toEqual({ ok: true, value: true });
    expect(settledText(card)).toContain(`✅ Yes — answered by an admin, <@${CAROL_ADMIN}>`);
  });
});

describe("durability and authenticity", () => {
  it("a tap after a restart still resumes the suspended turn", async () => {
    harness = await new SlackHarness().start();
    const { card, thread } = await confirmCard();
    await harness.restart();
    await tap(card, thread, card.actionIds[1]!);
    await harness.settle("answer", 1);
    expect(toolResult()).toEqual({ ok: true, value: false });
    expect(harness.posted(thread).at(-1)!.params.text).toBe("done");
    expect(settledText(card)).toContain("✅ No");
  });

  it("a forged or stale signature gets 401 and changes nothing", async () => {
    harness = await new SlackHarness().start();
    const { card, thread } = await confirmCard();
    const payload = blockActions({
      user: ALICE,
      actionId: card.actionIds[0]!,
      channel: CHANNEL,
      cardTs: card.ts,
      threadTs: thread,
      responseUrl: harness.responseUrl,
    });
    const forged = await harness.sender.interaction(payload, { secret: "not-the-secret" });
    const stale = await harness.sender.interaction(payload, { timestampSeconds: Math.floor(Date.now() / 1000) - 600 });
    const event = await harness.sender.event(
      messageEvent("message", { user: ALICE, text: "yes", threadTs: thread }),
      { teamId: "T_PARLEY", eventId: "EvForged" },
      { secret: "nope" },
    );
    expect([forged.status, stale.status, event.status]).toEqual([401, 401, 401]);
    expect(harness.engineCalls.filter((call) => call.method !== "handleMessage")).toHaveLength(0);
    expect((await harness.store.getAsk(card.askId))?.status).toBe("pending");
    expect(harness.anthropic.requests).toHaveLength(1);
  });
});
