import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ALICE, BOB, CAROL_ADMIN, type PostedCard, SlackHarness, waitFor } from "../slack/slack-harness.js";
import { CHANNEL, messageEvent, slashCommand, tapCard } from "../slack/slack-payloads.js";
import { API_TOKENS, ApiClient, OTHER_SECRET } from "./api-client.js";

let harness: SlackHarness;
let api: ApiClient;

beforeEach(async () => {
  harness = await new SlackHarness({ apiTokens: API_TOKENS }).start();
  api = new ApiClient(harness.baseUrl);
});

afterEach(async () => {
  await harness.close();
});

/** The thread an ask went to and its card, once the card is posted. */
async function cardOf(askId: string): Promise<{ thread: string; card: PostedCard }> {
  let found: { thread: string; card: PostedCard } | undefined;
  await waitFor(() => {
    const call = harness.slack
      .callsOf("chat.postMessage")
      .find((entry) => JSON.stringify(entry.params.blocks ?? "").includes(`ask:${askId}:`));
    if (call) found = { thread: String(call.params.thread_ts), card: harness.card(String(call.params.thread_ts)) };
    return found !== undefined;
  }, `the card of ${askId}`);
  return found!;
}

/** `user` taps the card's button `label`; the tap is acknowledged. */
async function tap(card: PostedCard, thread: string, user: string, label: string): Promise<void> {
  const response = await tapCard(harness.sender, { card, thread, user, button: label, responseUrl: harness.responseUrl });
  expect(response.status).toBe(200);
}

const confirmAsk = { channel: `slack:${CHANNEL}`, ask: { type: "confirm", question: "Ship release 1.4 to production?" } };

describe("HTTP API: asks put by another program", () => {
  it("creates an ask in a new thread, shows its card, and the long-poll returns the tapped answer with who gave it", async () => {
    const created = await api.create({ ...confirmAsk, metadata: { build: 812 } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: "pending", result: null, answered_by: null, metadata: { build: 812 } });
    const id = String(created.body.id);
    expect(created.headers.get("location")).toBe(`/v1/asks/${id}`);

    const { thread, card } = await cardOf(id);
    // The thread starts with a top-level message naming the token; the card is its first reply.
    const opener = harness.slack.callsOf("chat.postMessage").find((call) => call.result.ts === thread)!;
    expect(opener.params.thread_ts).toBeUndefined();
    expect(String(opener.params.text)).toContain("ci");
    expect(card.text).toContain("Ship release 1.4 to production?");

    const poll = api.get(id, 30);
    await tap(card, thread, ALICE, "Yes");
    const answered = await poll;
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({ id, status: "answered", result: { ok: true, value: true }, answered_by: `slack:${ALICE}` });
    expect(answered.body.ended_at).toEqual(expect.any(String));
    await harness.engine.idle();
    expect(harness.updatesOf(card.ts).at(-1)?.params.text).toMatch(/Yes|answered/i);
    // The agent was never involved: no model call was made for an API ask.
    expect(harness.anthropic.requests).toHaveLength(0);
  });

  it("takes GenericAgent's INTERRUPT payload as is, and a reply in the thread answers it", async () => {
    const created = await api.create({
      channel: `slack:${CHANNEL}`,
      interrupt: { status: "INTERRUPT", intent: "HUMAN_INTERVENTION", data: { question: "Which region?", candidates: ["eu", "us"] } },
    });
    expect(created.status).toBe(201);
    const id = String(created.body.id);
    const { thread, card } = await cardOf(id);
    expect(card.text).toContain("Which region?");
    const reply = messageEvent("message", { user: BOB, text: "us", threadTs: thread });
    expect((await harness.sender.event(reply, { teamId: "T_PARLEY", eventId: "EvReply1" })).status).toBe(200);
    const answered = await api.get(id, 10);
    expect(answered.body).toMatchObject({ status: "answered", result: { ok: true, value: "us" }, answered_by: `slack:${BOB}` });
  });

  it("lets only the named answerers (and admins) answer", async () => {
    const created = await api.create({ ...confirmAsk, answerers: [`slack:${ALICE}`] });
    const id = String(created.body.id);
    const { thread, card } = await cardOf(id);
    expect(JSON.stringify(card.blocks)).toContain(`Only <@${ALICE}> or an admin can answer`);
    await tap(card, thread, BOB, "No");
    expect((await harness.noticesTo(BOB, 1))[0]).toContain(`<@${ALICE}>`);
    expect((await api.get(id)).body.status).toBe("pending");
    await tap(card, thread, ALICE, "No");
    expect((await api.get(id, 10)).body).toMatchObject({
      status: "answered",
      result: { ok: true, value: false },
      answered_by: `slack:${ALICE}`,
    });
  });

  it("posts into a thread given by the caller, and refuses a second question there while the first waits", async () => {
    const first = await api.create(confirmAsk);
    const { thread } = await cardOf(String(first.body.id));
    const busy = await api.create({ ...confirmAsk, thread });
    expect(busy.status).toBe(409);
    expect(String(busy.body.error)).toContain("busy");
    await api.cancel(String(first.body.id));
    const second = await api.create({ channel: `slack:${CHANNEL}`, thread, ask: { question: "Release notes?", type: "input" } });
    expect(second.status).toBe(201);
    const { thread: secondThread } = await cardOf(String(second.body.id));
    expect(secondThread).toBe(thread);
  });

  it("DELETE cancels a pending ask and settles its card; a second DELETE is 409 with the ended ask", async () => {
    const id = String((await api.create(confirmAsk)).body.id);
    const { card } = await cardOf(id);
    const cancelled = await api.cancel(id);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ id, status: "cancelled", result: { ok: false, cancelled: true }, answered_by: null });
    await harness.engine.idle();
    expect(harness.updatesOf(card.ts).length).toBeGreaterThan(0);
    const again = await api.cancel(id);
    expect(again.status).toBe(409);
    expect(again.body.ask).toMatchObject({ id, status: "cancelled" });
  });

  it("a DELETE racing a tap: one of them ends the ask, once, and the card is settled once", async () => {
    const id = String((await api.create(confirmAsk)).body.id);
    const { thread, card } = await cardOf(id);
    const [cancelled] = await Promise.all([api.cancel(id), tap(card, thread, ALICE, "Yes")]);
    await harness.engine.idle();
    const ended = (await api.get(id)).body;
    expect(["answered", "cancelled"]).toContain(ended.status);
    expect(cancelled.status).toBe(ended.status === "cancelled" ? 200 : 409);
    const claims = harness.store.db.prepare("SELECT action FROM audit WHERE target = ? AND action LIKE 'ask-%'").all(id) as Array<{
      action: string;
    }>;
    expect(claims).toHaveLength(1);
    expect(harness.updatesOf(card.ts)).toHaveLength(1);
  });

  it("Idempotency-Key: a retry returns the same ask and posts nothing more; the same key with another body is 409", async () => {
    const key = { "idempotency-key": "deploy-812" };
    const first = await api.create(confirmAsk, key);
    const id = String(first.body.id);
    await cardOf(id);
    const posts = harness.slack.callsOf("chat.postMessage").length;
    const retry = await api.create(confirmAsk, key);
    expect(retry.status).toBe(200);
    expect(retry.body.id).toBe(id);
    const other = await api.create({ ...confirmAsk, ask: { type: "confirm", question: "Something else?" } }, key);
    expect(other.status).toBe(409);
    await harness.engine.idle();
    expect(harness.slack.callsOf("chat.postMessage")).toHaveLength(posts);
    // Keys are per token: another token's same key is its own ask.
    const theirs = await new ApiClient(harness.baseUrl, OTHER_SECRET).create(confirmAsk, key);
    expect(theirs.status).toBe(201);
    expect(theirs.body.id).not.toBe(id);
  });

  it("a bad ask gets a 400 the caller can repair, in the wording the model gets, and nothing is posted", async () => {
    const cases: Array<[unknown, string]> = [
      [{ channel: `slack:${CHANNEL}`, ask: { type: "select", question: "Pick" } }, 'type "select" needs "options"'],
      [{ channel: "teams:19abc", ask: { question: "Hi?" } }, '"channel" must be "slack:<id>" or "discord:<id>"'],
      [{ channel: `slack:${CHANNEL}` }, 'give the question as "ask"'],
      [{ channel: `slack:${CHANNEL}`, ask: { question: "x" }, answerers: ["discord:123"] }, "must be people of slack"],
      [{ channel: `slack:${CHANNEL}`, ask: { question: "x" }, callback_url: "ftp://x" }, "callback_url"],
      [{ channel: `slack:${CHANNEL}`, ask: { question: "x" }, colour: "red" }, 'unknown key(s) "colour"'],
      [[1, 2], "JSON object"],
    ];
    for (const [body, words] of cases) {
      const response = await api.create(body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(String(response.body.error)).toContain(words);
      expect(String(response.body.error)).toMatch(/^ERROR: /);
    }
    const notJson = await api.call("POST", "/v1/asks", "{not json", {});
    expect(notJson.status).toBe(400);
    harness.slack.notInChannel.add("C_SECRET");
    const closed = await api.create({ channel: "slack:C_SECRET", ask: { question: "x?" } });
    expect(closed.status).toBe(400);
    expect(String(closed.body.error)).toContain("invite");
    expect(harness.slack.callsOf("chat.postMessage").filter((call) => call.ok)).toHaveLength(0);
  });

  it("no token, a wrong token and a revoked token get 401 and post nothing; a token cannot see another's asks", async () => {
    for (const client of [new ApiClient(harness.baseUrl, null), new ApiClient(harness.baseUrl, "not-a-token-at-all-0000")]) {
      const response = await client.create(confirmAsk);
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toContain("Bearer");
    }
    // An admin creates a token in Slack, uses it, revokes it.
    const created = await harness.sender.command(slashCommand(CAROL_ADMIN, "tokens create deploy-bot", harness.responseUrl));
    expect(created.status).toBe(200);
    await waitFor(() => harness.slack.responses.length > 0, "the admin's reply");
    const reply = JSON.stringify(harness.slack.responses.at(-1)!.body);
    const secret = /parley_[A-Za-z0-9_-]+/.exec(reply)?.[0];
    expect(secret).toBeDefined();
    const adminToken = new ApiClient(harness.baseUrl, secret!);
    const own = await adminToken.create(confirmAsk);
    expect(own.status).toBe(201);
    // Neither token reads nor cancels the other's ask: it does not exist for them.
    expect((await api.get(String(own.body.id))).status).toBe(404);
    expect((await api.cancel(String(own.body.id))).status).toBe(404);
    expect((await adminToken.get(String(own.body.id))).status).toBe(200);
    await harness.sender.command(slashCommand(CAROL_ADMIN, "tokens revoke deploy-bot", harness.responseUrl));
    await waitFor(() => harness.slack.responses.length > 1, "the revoke reply");
    const posts = harness.slack.callsOf("chat.postMessage").length;
    expect((await adminToken.create(confirmAsk)).status).toBe(401);
    expect((await adminToken.get(String(own.body.id))).status).toBe(401);
    await harness.engine.idle();
    expect(harness.slack.callsOf("chat.postMessage")).toHaveLength(posts);
    // The name stays the revoked token's: a new token under it would inherit the old one's asks.
    await harness.sender.command(slashCommand(CAROL_ADMIN, "tokens create deploy-bot", harness.responseUrl));
    await waitFor(() => harness.slack.responses.length > 2, "the refused create");
    expect(JSON.stringify(harness.slack.responses.at(-1)!.body)).toContain("exists or existed");
    // The secret is in the admin's private reply only: never in the audit trail or the database file.
    const rows = harness.store.db.prepare("SELECT * FROM audit").all();
    expect(JSON.stringify(rows)).not.toContain(secret);
    expect(JSON.stringify(harness.store.db.prepare("SELECT * FROM api_tokens").all())).not.toContain(secret);
  });

  it("refuses a body over 64 KB with 413, and a wait over 60 s with 400", async () => {
    const big = await api.create({ ...confirmAsk, metadata: { blob: "x".repeat(70_000) } });
    expect(big.status).toBe(413);
    expect((await api.call("GET", "/v1/asks/abc?wait=61")).status).toBe(400);
    expect((await api.call("GET", "/v1/asks/abc?wait=x")).status).toBe(400);
    const put = await api.call("PUT", "/v1/asks/abc");
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("GET, DELETE");
    const nowhere = await api.call("GET", "/v1/nothing");
    expect(nowhere.status).toBe(404);
    expect(String(nowhere.body.error)).toContain("no route");
  });

  it("retries under one Idempotency-Key sent at the same moment open one thread, one ask and one card", async () => {
    const key = { "idempotency-key": "burst-1" };
    const responses = await Promise.all([1, 2, 3, 4, 5].map(() => api.create(confirmAsk, key)));
    expect(responses.map((response) => response.status).sort()).toEqual([200, 200, 200, 200, 201]);
    expect(new Set(responses.map((response) => response.body.id)).size).toBe(1);
    await cardOf(String(responses[0]!.body.id));
    await harness.engine.idle();
    const topLevel = harness.slack.callsOf("chat.postMessage").filter((call) => call.ok && call.params.thread_ts === undefined);
    expect(topLevel).toHaveLength(1);
  });

  it("a shutdown ends every long-poll at once with the ask as it stands", async () => {
    const id = String((await api.create(confirmAsk)).body.id);
    const started = Date.now();
    const poll = api.get(id, 60);
    await new Promise((resolve) => setTimeout(resolve, 100));
    harness.engine.endApiWaits();
    const response = await poll;
    expect(response.body.status).toBe("pending");
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("answerers: an empty list is refused, a repeated person is named once", async () => {
    const empty = await api.create({ ...confirmAsk, answerers: [] });
    expect(empty.status).toBe(400);
    expect(String(empty.body.error)).toContain('"answerers" is empty');
    const id = String((await api.create({ ...confirmAsk, answerers: [`slack:${ALICE}`, `slack:${ALICE}`] })).body.id);
    const { card } = await cardOf(id);
    expect(JSON.stringify(card.blocks)).toContain(`Only <@${ALICE}> or an admin can answer`);
  });
});
