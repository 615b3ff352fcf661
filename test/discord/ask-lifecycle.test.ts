import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ask, lastToolResults, reply, toolUse } from "../fakes/fake-anthropic.js";
import { ADMIN, ALICE, BOB, componentWith, customIds, DiscordHarness } from "./discord-harness.js";

let harness: DiscordHarness;

beforeEach(async () => {
  harness = await new DiscordHarness().start();
});

afterEach(async () => {
  await harness.close();
});

const PICK = { type: "buttons", question: "Ship it?", options: ["ship", "wait"] };

async function cardFor(input: unknown, final = "Done here.") {
  harness.anthropic.script(ask(input), reply(final));
  const thread = await harness.mention(ALICE, "release");
  return { thread, card: await harness.card(thread) };
}

function lastResult(): unknown {
  return JSON.parse(lastToolResults(harness.anthropic.requests.at(-1))[0]!.content);
}

function settledContent(card: Record<string, unknown>): string {
  return String(harness.discord.message(String(card.id))?.content);
}

describe("ending an ask on Discord", () => {
  /** Two questions then an answer, each model step `delayMs` long: the REST calls made after each tap. */
  async function answerThrough(delayMs: number): Promise<{ thread: string; calls: string[][] }> {
    harness.anthropic.delayMs = delayMs;
    harness.anthropic.script(ask(PICK), ask({ ...PICK, question: "Really?" }), reply("Shipped."));
    const thread = await harness.mention(ALICE, "release");
    const tap = async (card: Record<string, unknown>, then: () => Promise<unknown>) => {
      const before = harness.discord.calls.length;
      harness.discord.click(ALICE, card, componentWith(card, /:opt:0$/).custom_id);
      await then();
      await harness.quiet();
      const kind = (call: { method: string; path: string }) =>
        call.path.endsWith("/callback") ? "ack" : `${call.method} ${call.path.endsWith("/messages") ? "message" : "edit"}`;
      return harness.discord.calls.slice(before).map(kind);
    };
    const first = await harness.card(thread);
    const second = await tap(first, () => harness.card(thread, first));
    const last = await tap(await harness.card(thread, first), () => harness.botSays(thread, /Shipped\./));
    return { thread, calls: [second, last] };
  }

  /** Bot messages in the thread that still show a turn at work: a Stop button or ⏳. */
  const stale = (thread: string) =>
    harness.discord.botMessagesIn(thread).filter((message) => /stop:|⏳/.test(JSON.stringify([message.content, message.components])));

  it("an answered ask with quick steps costs two REST calls besides the tap's ack: the settle, the next card or the answer", async () => {
    const { thread, calls } = await answerThrough(0);
    expect(calls.map((kinds) => kinds.sort())).toEqual([
      ["PATCH edit", "POST message", "ack"],
      ["PATCH edit", "POST message", "ack"],
    ]);
    expect(stale(thread)).toEqual([]);
  });

  it("an answered ask with slow steps costs three: the settle, the status line, and that line edited into the next card or the answer", async () => {
    const { thread, calls } = await answerThrough(1500);
    expect(calls.map((kinds) => kinds.sort())).toEqual([
      ["PATCH edit", "PATCH edit", "POST message", "ack"],
      ["PATCH edit", "PATCH edit", "POST message", "ack"],
    ]);
    expect(stale(thread)).toEqual([]);
    expect(String(harness.discord.botMessagesIn(thread).at(-1)?.content)).toBe("Shipped.");
  });

  it("a status line deleted before its card took its place: the card is posted as a message of its own", async () => {
    harness.anthropic.delayMs = 1500;
    harness.anthropic.script(ask(PICK));
    const thread = await harness.mention(ALICE, "release", { quiet: false });
    const status = await harness.until(
      "the status line",
      () => harness.discord.botMessagesIn(thread).find((message) => String(message.content).startsWith("⏳")),
      { quiet: false },
    );
    harness.discord.forget(String(status.id));
    const card = await harness.card(thread);
    await harness.quiet();
    expect(card.id).not.toBe(status.id);
    expect(harness.discord.botMessagesIn(thread).filter((message) => customIds(message).some((id) => id.startsWith("ask:")))).toHaveLength(
      1,
    );
  });

  it("Cancel tells the model the ask was cancelled and settles the card", async () => {
    const { thread, card } = await cardFor(PICK);
    harness.discord.click(ALICE, card, componentWith(card, /:cancel$/).custom_id);
    await harness.botSays(thread, /Done here\./);
    expect(lastResult()).toEqual({ ok: false, cancelled: true });
    expect(settledContent(card)).toContain(`🚫 Cancelled by <@${ALICE.id}>`);
  });

  it("an ask nobody answers expires after its timeout and the card says so", async () => {
    const { thread, card } = await cardFor({ ...PICK, timeout_s: 5 });
    harness.now += 6_000;
    expect(await harness.engine.sweep()).toBe(1);
    await harness.botSays(thread, /Done here\./);
    expect(lastResult()).toEqual({ ok: false, timeout: true });
    expect(settledContent(card)).toContain("⌛ Expired");
    expect(harness.discord.message(String(card.id))?.components).toEqual([]);
  });

  it("the Stop button on the status message halts a running turn and is then removed", async () => {
    // The status message shows once a step has run for a second: this one takes three.
    harness.anthropic.script({ content: [toolUse("lookup", { q: "x" })], stopReason: "tool_use", delayMs: 3000 });
    const thread = await harness.mention(ALICE, "look something up", { quiet: false });
    const status = await harness.until(
      "the status message",
      () => harness.discord.botMessagesIn(thread).find((message) => customIds(message).some((id) => id.startsWith("stop:"))),
      { quiet: false },
    );
    expect(String(status.content)).toContain("Thinking…");
    // The status line says the bot is busy; a typing indicator on top would cost a call per step.
    expect(harness.discord.calls.some((call) => call.path === `/channels/${thread}/typing`)).toBe(false);
    harness.discord.click(ALICE, status, componentWith(status, /^stop:/).custom_id);
    await harness.botSays(thread, /⏹ Stopped\./);
    expect(harness.anthropic.requests).toHaveLength(1);
    expect(harness.discord.message(String(status.id))?.components).toEqual([]);
  });

  it("Stop on a waiting card ends the turn: the question is cancelled, the card settled as stopped, the model not called", async () => {
    const { thread, card } = await cardFor(PICK);
    await harness.discord.callbackOf(harness.discord.click(BOB, card, componentWith(card, /^stop:/).custom_id));
    // Only those who may answer may stop: Bob is told so, privately, and the card stays.
    const notice = await harness.until("Bob's notice", () => harness.discord.ephemeralsFor(BOB.id)[0]);
    expect(String(notice.content)).toMatch(/can stop it/);
    expect(customIds(harness.discord.message(String(card.id))!)).toContain(componentWith(card, /^stop:/).custom_id);
    harness.discord.click(ALICE, card, componentWith(card, /^stop:/).custom_id);
    await harness.botSays(thread, /Stopped by/);
    expect(settledContent(card)).toContain(`⏹ Stopped by <@${ALICE.id}>`);
    expect(harness.discord.message(String(card.id))?.components).toEqual([]);
    expect(harness.anthropic.requests).toHaveLength(1);
    expect(
      (
        await harness.store.findSession({
          platform: "discord",
          workspace: harness.discord.guildId,
          channel: harness.discord.channelId,
          thread,
        })
      )?.status,
    ).toBe("idle");
  });

  it("writing “stop” in the thread while an ask waits cancels it and settles the card as stopped", async () => {
    const { thread, card } = await cardFor(PICK);
    harness.discord.say(ALICE, "stop", { channelId: thread, mentionBot: true });
    await harness.botSays(thread, /Stopped by/);
    expect(settledContent(card)).toContain(`⏹ Stopped by <@${ALICE.id}>`);
    expect(harness.anthropic.requests).toHaveLength(1);
  });

  it("another member's tap consumes nothing and tells only them who may answer", async () => {
    const { thread, card } = await cardFor(PICK);
    const tap = harness.discord.click(BOB, card, componentWith(card, /:opt:0$/).custom_id);
    await harness.discord.callbackOf(tap);
    const notice = await harness.until("Bob's notice", () => harness.discord.ephemeralsFor(BOB.id)[0]);
    expect(String(notice.content)).toContain(`Only <@${ALICE.id}> or an admin`);
    expect(harness.anthropic.requests).toHaveLength(1);
    expect(customIds(harness.discord.message(String(card.id))!)).toContain(componentWith(card, /:opt:0$/).custom_id);

    harness.discord.click(ALICE, card, componentWith(card, /:opt:1$/).custom_id);
    await harness.botSays(thread, /Done here\./);
    expect(lastResult()).toEqual({ ok: true, value: "wait" });
  });

  it("another member pressing Answer gets a private refusal instead of a form", async () => {
    const { card } = await cardFor({ type: "input", question: "Name?" });
    const open = harness.discord.click(BOB, card, componentWith(card, /:open$/).custom_id);
    const callback = await harness.discord.callbackOf(open);
    expect(callback.type).toBe(4);
    expect(String(callback.data?.content)).toBe(`Only <@${ALICE.id}> or an admin can answer this.`);
    expect(harness.discord.modals).toEqual([]);
  });

  it("an admin (Manage Server) may answer, and the card says an admin did", async () => {
    const { thread, card } = await cardFor(PICK);
    harness.discord.click(ADMIN, card, componentWith(card, /:opt:0$/).custom_id);
    await harness.botSays(thread, /Done here\./);
    expect(settledContent(card)).toContain(`✅ ship — answered by an admin, <@${ADMIN.id}>`);
  });

  it("an admin's reply in the thread answers too: admin comes from their Manage Server role", async () => {
    const { thread, card } = await cardFor(PICK);
    harness.discord.say(ADMIN, "wait", { channelId: thread });
    await harness.botSays(thread, /Done here\./);
    expect(lastResult()).toEqual({ ok: true, value: "wait" });
    expect(settledContent(card)).toContain(`answered by an admin, <@${ADMIN.id}>`);
  });

  it("a double tap resumes the model exactly once; the second tap hears it was already answered", async () => {
    const { thread, card } = await cardFor(PICK);
    const ship = componentWith(card, /:opt:0$/).custom_id;
    harness.discord.click(ALICE, card, ship);
    harness.discord.click(ALICE, card, ship);
    await harness.botSays(thread, /Done here\./);
    await harness.until("the second tap's notice", () => harness.discord.ephemeralsFor(ALICE.id)[0]);
    expect(harness.anthropic.requests).toHaveLength(2);
    expect(harness.discord.botMessagesIn(thread).filter((message) => message.content === "Done here.")).toHaveLength(1);
    expect(String(harness.discord.ephemeralsFor(ALICE.id)[0]?.content)).toBe("This question was already answered.");
  });

  it("a restart between the card and the tap: the tap on the old card still resumes", async () => {
    const { thread, card } = await cardFor(PICK);
    await harness.restart();
    expect(harness.discord.gateway.identifies).toHaveLength(2);
    harness.discord.click(ALICE, card, componentWith(card, /:opt:0$/).custom_id);
    await harness.botSays(thread, /Done here\./);
    expect(lastResult()).toEqual({ ok: true, value: "ship" });
    expect(settledContent(card)).toContain("✅ ship");
  });

  it("an invalid modal answer comes back privately with a Fix button that reopens the modal prefilled", async () => {
    const fields = [
      { name: "host", label: "Host", type: "text", required: true },
      { name: "port", label: "Port", type: "number", required: true },
    ];
    const { thread, card } = await cardFor({ type: "form", question: "Where?", fields });
    harness.discord.click(ALICE, card, componentWith(card, /:open$/).custom_id);
    const modal = await harness.until("the modal", () => harness.discord.modals[0]);
    harness.discord.submitModal(ALICE, modal, { "field:host": "db.internal", "field:port": "fifty" });
    const error = await harness.until("the error", () => harness.discord.ephemeralsFor(ALICE.id)[0]);
    expect(String(error.content)).toContain("Port must be a number.");
    expect(harness.anthropic.requests).toHaveLength(1);

    harness.discord.click(ALICE, error, componentWith(error, /:open$/).custom_id);
    const again = await harness.until("the reopened modal", () => harness.discord.modals[1]);
    const host = (again.data.components as Array<{ component: { custom_id: string; value?: string } }>)[0]!.component;
    expect(host.value).toBe("db.internal");
    harness.discord.submitModal(ALICE, again, { "field:host": "db.internal", "field:port": "5432" });
    await harness.botSays(thread, /Done here\./);
    expect(lastResult()).toEqual({ ok: true, value: { host: "db.internal", port: 5432 } });
  });
});
