import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cardNonce } from "../../adapters/discord/card-lookup.js";
import { ask, reply } from "../fakes/fake-anthropic.js";
import { deadOwner } from "../support/dead-process.js";
import { ALICE, componentWith, customIds, DiscordHarness } from "./discord-harness.js";

/** What a crash between the post and storing its reference leaves: no reference, and the dead process's claim. */
function crashedBeforeTheRefWasStored(askId: string): void {
  harness.store.db.prepare("UPDATE asks SET card_ref = NULL, post_owner = ? WHERE id = ?").run(deadOwner(), askId);
}

let harness: DiscordHarness;

beforeEach(async () => {
  harness = await new DiscordHarness().start();
});

afterEach(async () => {
  await harness.close();
});

const PICK = { type: "buttons", question: "Ship it?", options: ["ship", "wait"] };

async function cardFor() {
  harness.anthropic.script(ask(PICK), reply("Done here."));
  const thread = await harness.mention(ALICE, "release");
  const card = await harness.card(thread);
  const askId = componentWith(card, /:cancel$/).custom_id.split(":")[1]!;
  return { thread, card, askId };
}

function cardsOf(thread: string, askId: string): Array<Record<string, unknown>> {
  return harness.discord.botMessagesIn(thread).filter((message) => customIds(message).some((id) => id.startsWith(`ask:${askId}:`)));
}

function storedCardRef(askId: string): unknown {
  const row = harness.store.db.prepare("SELECT card_ref FROM asks WHERE id = ?").get(askId) as { card_ref: string | null };
  return row.card_ref === null ? null : JSON.parse(row.card_ref);
}

describe("cards posted once (Discord)", () => {
  it("posts a card with a nonce of at most 25 characters and enforce_nonce; the same post again returns the same message", async () => {
    const { thread, card, askId } = await cardFor();
    const post = harness.discord.calls.find((call) => call.method === "POST" && call.body?.nonce === cardNonce(askId));
    expect(post?.body).toMatchObject({ enforce_nonce: true });
    expect(cardNonce(askId).length).toBeLessThanOrEqual(25);

    // A second post of the same card (a retry whose first answer was lost) within Discord's window.
    const found = (await harness.store.getAskWithSession(askId))!;
    const again = await harness.adapter.postCard({
      askId: found.ask.id,
      sessionId: found.session.id,
      conversation: found.session.conversation,
      spec: found.ask.spec,
      answerers: [ALICE.id],
      anyoneInThread: false,
      deadline: found.ask.deadline,
      cardRef: null,
      offersStop: true,
    });
    expect(JSON.parse(again)).toEqual({ channelId: thread, messageId: card.id });
    expect(cardsOf(thread, askId)).toHaveLength(1);
  });

  it("a card Discord posted but whose id was never stored is adopted after a restart, past the nonce window", async () => {
    const { thread, card, askId } = await cardFor();
    harness.discord.nonceWindowMs = 0;
    crashedBeforeTheRefWasStored(askId);
    await harness.restart();

    expect(cardsOf(thread, askId)).toHaveLength(1);
    expect(harness.discord.calls.some((call) => call.method === "GET" && call.path === `/channels/${thread}/messages`)).toBe(true);
    expect(storedCardRef(askId)).toEqual({ channelId: thread, messageId: card.id });
    harness.discord.click(ALICE, card, componentWith(card, /:opt:0$/).custom_id);
    await harness.botSays(thread, /Done here\./);
    expect(String(harness.discord.message(String(card.id))?.content)).toContain("✅ ship");
  });

  it("a card that never reached Discord is posted after a restart", async () => {
    const { thread, card, askId } = await cardFor();
    harness.discord.nonceWindowMs = 0;
    harness.discord.forget(String(card.id));
    crashedBeforeTheRefWasStored(askId);
    await harness.restart();

    const cards = cardsOf(thread, askId);
    expect(cards).toHaveLength(1);
    expect(cards[0]!.id).not.toBe(card.id);
    expect(storedCardRef(askId)).toEqual({ channelId: thread, messageId: cards[0]!.id });
  });

  it("records a settle, so a restart does not edit the settled card again", async () => {
    const { thread, card } = await cardFor();
    harness.discord.click(ALICE, card, componentWith(card, /:opt:0$/).custom_id);
    await harness.botSays(thread, /Done here\./);
    const edits = () =>
      harness.discord.calls.filter((call) => call.method === "PATCH" && call.path.endsWith(`/messages/${String(card.id)}`));
    const before = edits().length;
    await harness.restart();
    expect(edits()).toHaveLength(before);
  });
});

describe("answers posted once (Discord)", () => {
  it("an answer edited into the status line before a crash is not posted again after the restart", async () => {
    // A slow step shows a status line, and the answer takes its place with a PATCH, which carries no nonce.
    harness.anthropic.delayMs = 1500;
    harness.anthropic.script(ask(PICK), reply("Shipped."));
    const thread = await harness.mention(ALICE, "release");
    const card = await harness.card(thread);
    // The process dies after the edit landed and before the reply was marked posted.
    harness.store.replyPosted = async () => {};
    harness.discord.click(ALICE, card, componentWith(card, /:opt:0$/).custom_id);
    await harness.botSays(thread, /Shipped\./);
    harness.store.db.prepare("UPDATE pending_replies SET post_owner = ?").run(deadOwner());
    await harness.restart();

    const answers = harness.discord.botMessagesIn(thread).filter((message) => message.content === "Shipped.");
    expect(answers).toHaveLength(1);
    expect(answers[0]!.edited_timestamp).toBeTruthy();
    expect(await harness.store.listPendingReplies(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
  });

  it("an answer that never reached Discord is posted after the restart", async () => {
    harness.anthropic.script(ask(PICK), reply("Shipped."));
    const thread = await harness.mention(ALICE, "release");
    const card = await harness.card(thread);
    harness.store.replyPosted = async () => {};
    harness.discord.click(ALICE, card, componentWith(card, /:opt:0$/).custom_id);
    const lost = await harness.botSays(thread, /Shipped\./);
    harness.discord.forget(String(lost.id));
    harness.store.db.prepare("UPDATE pending_replies SET post_owner = ?").run(deadOwner());
    await harness.restart();

    expect(harness.discord.botMessagesIn(thread).filter((message) => message.content === "Shipped.")).toHaveLength(1);
    expect(await harness.store.listPendingReplies(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
  });
});
