import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ask, reply } from "../fakes/fake-anthropic.js";
import { FAKE_BOT_USER_ID } from "../fakes/fake-slack-api.js";
import { deadOwner } from "../support/dead-process.js";
import { ALICE, actionIdsOf, SlackHarness } from "./slack-harness.js";
import { blockActions, CHANNEL, messageEvent, nextTs } from "./slack-payloads.js";

/** What a crash between the post and storing its reference leaves: no reference, and the dead process's claim. */
function crashedBeforeTheRefWasStored(askId: string): void {
  harness.store.db.prepare("UPDATE asks SET card_ref = NULL, post_owner = ? WHERE id = ?").run(deadOwner(), askId);
}

let harness: SlackHarness;

beforeEach(async () => {
  harness = await new SlackHarness().start();
});

afterEach(async () => {
  await harness.close();
});

let eventCounter = 0;

/** Mentions the bot and waits for the card of the ask the model makes. */
async function cardAfterMention(): Promise<{ thread: string; ts: string; askId: string }> {
  harness.anthropic.script(ask({ question: "Which environment?", candidates: ["staging", "production"] }), reply("Done."));
  const thread = nextTs();
  await harness.sender.event(messageEvent("app_mention", { user: ALICE, text: `<@${FAKE_BOT_USER_ID}> deploy`, ts: thread }), {
    teamId: "T_PARLEY",
    eventId: `EvCards${++eventCounter}`,
  });
  await harness.settle("handleMessage", 1);
  const card = harness.card(thread);
  return { thread, ts: card.ts, askId: card.askId };
}

function cardPosts(askId: string): number {
  return harness.slack
    .callsOf("chat.postMessage")
    .filter((call) => call.ok && actionIdsOf(call.params.blocks).some((id) => id.startsWith(`ask:${askId}:`))).length;
}

function storedCardRef(askId: string): unknown {
  const row = harness.store.db.prepare("SELECT card_ref FROM asks WHERE id = ?").get(askId) as { card_ref: string | null };
  return row.card_ref === null ? null : JSON.parse(row.card_ref);
}

async function tap(thread: string, ts: string, askId: string): Promise<void> {
  await harness.sender.interaction(
    blockActions({
      user: ALICE,
      actionId: `ask:${askId}:opt:1`,
      channel: CHANNEL,
      cardTs: ts,
      threadTs: thread,
      responseUrl: harness.responseUrl,
    }),
  );
}

describe("cards posted once (Slack)", () => {
  it("posts each card with message metadata naming its ask", async () => {
    const { askId } = await cardAfterMention();
    const post = harness.slack
      .callsOf("chat.postMessage")
      .find((call) => actionIdsOf(call.params.blocks).some((id) => id.startsWith("ask:")))!;
    expect(post.params.metadata).toEqual({ event_type: "parley_ask", event_payload: { ask_id: askId } });
  });

  it("a card Slack posted but whose ts was never stored is adopted after a restart, not posted again", async () => {
    const { thread, ts, askId } = await cardAfterMention();
    // The crash: Slack has the card, the database does not know its ts.
    crashedBeforeTheRefWasStored(askId);
    await harness.restart();

    expect(cardPosts(askId)).toBe(1);
    const lookups = harness.slack.callsOf("conversations.replies");
    expect(lookups).toHaveLength(1);
    expect(lookups[0]!.params).toMatchObject({ channel: CHANNEL, ts: thread, include_all_metadata: "true" });
    expect(storedCardRef(askId)).toEqual({ channel: CHANNEL, ts });
    // The adopted card is drawn again (its deadline moved) and still answers.
    expect(harness.updatesOf(ts)).toHaveLength(1);
    expect(actionIdsOf(harness.updatesOf(ts)[0]!.params.blocks)).toContain(`ask:${askId}:opt:1`);
    await tap(thread, ts, askId);
    expect((await harness.settle("answer", 1))[0]!.result).toEqual({ kind: "accepted" });
    expect(JSON.stringify(harness.updatesOf(ts).at(-1)!.params.blocks)).toContain("production");
  });

  it("a card that never reached Slack is posted after a restart", async () => {
    const { ts, askId } = await cardAfterMention();
    // The crash came before Slack saw the post: no card in the thread, no ts stored.
    harness.slack.messages.splice(
      harness.slack.messages.findIndex((message) => message.ts === ts),
      1,
    );
    crashedBeforeTheRefWasStored(askId);
    await harness.restart();

    expect(cardPosts(askId)).toBe(2);
    const reposted = storedCardRef(askId) as { ts: string };
    expect(reposted.ts).not.toBe(ts);
  });

  it("records a settle, so a restart does not settle the card again; an unrecorded settle is redone once", async () => {
    const { thread, ts, askId } = await cardAfterMention();
    await tap(thread, ts, askId);
    await harness.settle("answer", 1);
    expect(harness.updatesOf(ts)).toHaveLength(1);
    const settledAt = () =>
      (harness.store.db.prepare("SELECT settled_at FROM asks WHERE id = ?").get(askId) as { settled_at: number | null }).settled_at;
    expect(settledAt()).not.toBeNull();

    await harness.restart();
    expect(harness.updatesOf(ts)).toHaveLength(1);

    // A crash between the claim and the card update: the settle is not recorded, so the next start redoes it, once.
    harness.store.db.prepare("UPDATE asks SET settled_at = NULL WHERE id = ?").run(askId);
    await harness.restart();
    expect(harness.updatesOf(ts)).toHaveLength(2);
    // That settle's mark is written with the store's next write, here the close of the next restart: once.
    await harness.restart();
    expect(harness.updatesOf(ts)).toHaveLength(2);
    expect(settledAt()).not.toBeNull();
  });
});

describe("final answers posted once (Slack)", () => {
  const answers = (text: string) => harness.slack.callsOf("chat.postMessage").filter((call) => call.ok && call.params.text === text);

  it("an answer that went out before the crash is found by its metadata and not posted again; one that did not is posted", async () => {
    harness.anthropic.script(reply("All done."));
    const thread = nextTs();
    await harness.sender.event(messageEvent("app_mention", { user: ALICE, text: `<@${FAKE_BOT_USER_ID}> go`, ts: thread }), {
      teamId: "T_PARLEY",
      eventId: `EvReply${++eventCounter}`,
    });
    await harness.settle("handleMessage", 1);
    const [posted] = answers("All done.");
    expect(posted?.params.metadata).toMatchObject({ event_type: "parley_reply", event_payload: { reply_key: expect.any(String) } });
    const key = (posted!.params.metadata as { event_payload: { reply_key: string } }).event_payload.reply_key;
    const session = await harness.store.findSession({ platform: "slack", workspace: "T_PARLEY", channel: CHANNEL, thread });

    // The crash came after the post but before the outbox row went: the restart finds the answer in the thread.
    harness.store.db
      .prepare("INSERT INTO pending_replies (key, session_id, text, created_at) VALUES (?, ?, ?, ?)")
      .run(key, session!.id, "All done.", 1);
    await harness.restart();
    expect(answers("All done.")).toHaveLength(1);
    expect(await harness.store.listPendingReplies(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);

    // The crash came before the post: the restart posts it, once.
    harness.store.db
      .prepare("INSERT INTO pending_replies (key, session_id, text, created_at) VALUES (?, ?, ?, ?)")
      .run(`${session!.id}:9`, session!.id, "Never seen.", 2);
    await harness.restart();
    expect(answers("Never seen.")).toHaveLength(1);
    expect(answers("Never seen.")[0]?.params.thread_ts).toBe(thread);
  });
});
