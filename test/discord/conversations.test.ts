import { afterEach, describe, expect, it } from "vitest";
import { ask, lastToolResults, reply } from "../fakes/fake-anthropic.js";
import { ALICE, BOB, componentWith, DiscordHarness, type HarnessOptions, OTHER_BOT } from "./discord-harness.js";

let harness: DiscordHarness;

async function startWith(options: HarnessOptions = {}): Promise<DiscordHarness> {
  harness = await new DiscordHarness(options).start();
  return harness;
}

afterEach(async () => {
  await harness.close();
});

const REGION = { type: "select", question: "Which region?", options: ["eu-west", "us-east"] };

function lastResult(): unknown {
  return JSON.parse(lastToolResults(harness.anthropic.requests.at(-1))[0]!.content);
}

function userTexts(): string[] {
  return harness.anthropic.requests.flatMap((request) =>
    request.body.messages.flatMap((message) =>
      typeof message.content === "string"
        ? [message.content]
        : message.content.filter((block) => block.type === "text").map((block) => String(block.text)),
    ),
  );
}

describe("conversations on Discord", () => {
  it("a free-text reply in the thread answers the pending question; someone else's reply is told who may answer", async () => {
    await startWith();
    harness.anthropic.script(ask(REGION), reply("Using ap-south."));
    const thread = await harness.mention(ALICE, "pick a region");
    await harness.card(thread);
    harness.discord.say(BOB, "us-east", { channelId: thread });
    const notice = await harness.botSays(thread, new RegExp(`^<@${BOB.id}> Only`));
    expect(notice.content).toContain(`<@${ALICE.id}>`);
    // Said in public (a bot cannot whisper outside an interaction), so it names Bob without notifying anyone.
    const sent = harness.discord.calls.find((call) => call.method === "POST" && String(call.body?.content).startsWith(`<@${BOB.id}> Only`));
    expect(sent?.body?.allowed_mentions).toEqual({ parse: [] });
    expect(harness.anthropic.requests).toHaveLength(1);

    harness.discord.say(ALICE, "ap-south", { channelId: thread });
    await harness.botSays(thread, /Using ap-south\./);
    expect(lastResult()).toEqual({ ok: true, value: "ap-south", other: true });
  });

  it("a DM works without a mention, and its card answers in the DM", async () => {
    await startWith();
    harness.anthropic.script(ask({ type: "confirm", question: "Archive the project?" }), reply("Archived."));
    const channel = harness.discord.sayInDm(ALICE, "archive my project");
    const card = await harness.card(channel);
    expect(harness.discord.threadIds()).toEqual([]);
    harness.discord.click(ALICE, card, componentWith(card, /:opt:0$/).custom_id);
    await harness.botSays(channel, /Archived\./);
    expect(lastResult()).toEqual({ ok: true, value: true });
    expect(userTexts().some((text) => text.includes("archive my project"))).toBe(true);
  });

  it("without the MessageContent intent, plain replies are unreadable but a mention or a Discord reply to the card answers", async () => {
    await startWith({ messageContent: false });
    expect(harness.discord.messageContentIntent).toBe(false);
    harness.anthropic.script(ask(REGION), reply("Going with eu-north."), ask(REGION), reply("Going with us-west."));
    const thread = await harness.mention(ALICE, "pick a region");
    expect(userTexts().some((text) => text.includes("pick a region"))).toBe(true);
    const card = await harness.card(thread);
    // The card offers only what works without the intent: Reply on the card, or a mention.
    expect(String(card.content)).toContain("Or use Reply on this card (or mention the bot) with your own answer.");
    expect(String(card.content)).not.toContain("reply in this thread");

    harness.discord.say(ALICE, "ignored because Discord blanks it", { channelId: thread });
    harness.discord.say(ALICE, "eu-north", { channelId: thread, replyTo: String(card.id) });
    await harness.botSays(thread, /Going with eu-north\./);
    expect(lastResult()).toEqual({ ok: true, value: "eu-north", other: true });
    expect(harness.anthropic.requests).toHaveLength(2);

    harness.discord.say(ALICE, "ask me again", { channelId: thread, mentionBot: true });
    await harness.card(thread, card);
    harness.discord.say(ALICE, "us-west", { channelId: thread, mentionBot: true });
    await harness.botSays(thread, /Going with us-west\./);
    expect(lastResult()).toEqual({ ok: true, value: "us-west", other: true });
  });

  it("an answer typed in the thread while the bot was down is read at the next start, and only once", async () => {
    await startWith();
    harness.anthropic.script(ask(REGION), reply("Using ap-south."));
    const thread = await harness.mention(ALICE, "pick a region");
    await harness.card(thread);
    // The gateway delivers nothing to a bot that is down, and a new session replays nothing.
    await harness.restart(() => harness.discord.say(ALICE, "ap-south", { channelId: thread }));
    await harness.botSays(thread, /Using ap-south\./);
    expect(lastResult()).toEqual({ ok: true, value: "ap-south", other: true });
    expect(harness.anthropic.requests).toHaveLength(2);
    // The next start reads the same messages again: every one of them is known by its id.
    await harness.restart();
    expect(harness.anthropic.requests).toHaveLength(2);
  });

  it("a mention in the channel while the bot was down opens its conversation at the next start, and only once", async () => {
    await startWith();
    harness.anthropic.script(reply("First done."), reply("Second done."));
    const first = await harness.mention(ALICE, "first request");
    await harness.botSays(first, /First done\./);
    // Nothing delivers it: only the catch-up of the channel, where a recent conversation lives, can read it.
    let second = "";
    await harness.restart(() => {
      second = harness.discord.say(ALICE, "second request", { mentionBot: true });
    });
    await harness.botSays(second, /Second done\./);
    expect(harness.discord.threadIds()).toContain(second);
    // The next start reads the channel again: the mention is known by its id, and its thread is not opened twice.
    await harness.restart();
    expect(harness.anthropic.requests).toHaveLength(2);
    expect(harness.discord.calls.filter((call) => call.path.endsWith(`/messages/${second}/threads`))).toHaveLength(1);
  });

  it("a mention sent while the bot was down in a channel where it has no conversation is read at the next start", async () => {
    await startWith();
    harness.anthropic.script(reply("Quiet channel done."));
    const quiet = harness.discord.addChannel("text");
    let missed = "";
    // The channel has never had a conversation: READY's newest-message id is what says it had a message since.
    await harness.restart(() => {
      missed = harness.discord.say(ALICE, "are you there?", { channelId: quiet, mentionBot: true });
    });
    await harness.botSays(missed, /Quiet channel done\./);
    await harness.restart();
    expect(harness.anthropic.requests).toHaveLength(1);
  });

  it("a MESSAGE_CREATE replayed after a gateway RESUME is processed once", async () => {
    await startWith();
    harness.anthropic.script(ask(REGION), reply("ok"));
    const thread = await harness.mention(ALICE, "pick a region");
    await harness.card(thread);
    const isMention = (event: { t: string; d: unknown }) => event.t === "MESSAGE_CREATE" && (event.d as { id: string }).id === thread;
    await harness.discord.gateway.reconnectAndReplay(isMention);
    expect(harness.discord.gateway.resumes).toHaveLength(1);
    expect(harness.discord.gateway.replayed).toBe(1);
    await harness.quiet();

    // After a restart discord.js's cache is empty, so only the store's event dedupe stands between it and a second turn.
    await harness.restart();
    expect(harness.discord.gateway.redeliver(isMention)).toBe(1);
    await harness.until("the redelivered mention", () =>
      harness.discord.calls.some(
        (call) => call.path === `/channels/${harness.discord.channelId}/messages/${thread}/threads` && call.status === 400,
      ),
    );
    expect(harness.anthropic.requests).toHaveLength(1);
    expect(harness.discord.botMessagesIn(thread).filter((message) => String(message.content).includes("Which region?"))).toHaveLength(1);
    expect(harness.discord.botMessagesIn(harness.discord.channelId)).toEqual([]);
  });

  it("an INTERACTION_CREATE replayed after a RESUME is answered once", async () => {
    await startWith();
    harness.anthropic.script(ask(REGION), reply("ok"));
    const thread = await harness.mention(ALICE, "pick a region");
    const card = await harness.card(thread);
    const tap = harness.discord.click(BOB, card, componentWith(card, /:opt:0$/).custom_id);
    await harness.discord.callbackOf(tap);
    await harness.discord.gateway.reconnectAndReplay((event) => event.t === "INTERACTION_CREATE");
    expect(harness.discord.gateway.replayed).toBe(1);
    await harness.quiet();
    expect(harness.discord.callbacks.filter((callback) => callback.interactionId === tap)).toHaveLength(1);
    expect(harness.discord.calls.filter((call) => call.path.startsWith(`/interactions/${tap}/`))).toHaveLength(1);
    expect(harness.discord.ephemeralsFor(BOB.id)).toHaveLength(1);
  });

  it("ignores other bots, even when they mention it", async () => {
    await startWith();
    harness.anthropic.script(reply("Hello Alice."));
    harness.discord.say(OTHER_BOT, "hey parley, start something", { mentionBot: true });
    const thread = await harness.mention(ALICE, "hello");
    await harness.botSays(thread, /Hello Alice\./);
    expect(harness.discord.threadIds()).toEqual([thread]);
    expect(harness.anthropic.requests).toHaveLength(1);
  });
});
