import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CallbackSender } from "../../src/ports/ask-api.js";
import { FAKE_BOT_USER_ID } from "../fakes/fake-slack-api.js";
import { ALICE, CAROL_ADMIN, SlackHarness, waitFor } from "../slack/slack-harness.js";
import { CHANNEL, messageEvent, slashCommand } from "../slack/slack-payloads.js";
import { API_TOKENS, ApiClient } from "./api-client.js";

let harness: SlackHarness;
let api: ApiClient;
let now: number;
/** Callbacks as they would leave: the receiver's answer is scripted, every attempt recorded. */
const sent: Array<{ url: string; body: string; headers: Record<string, string> }> = [];
let receiverStatus = 200;
const sender: CallbackSender = {
  async send(url, body, headers) {
    sent.push({ url, body, headers });
    return receiverStatus;
  },
};

beforeEach(async () => {
  now = Date.UTC(2026, 11, 1, 12);
  sent.length = 0;
  receiverStatus = 200;
  harness = await new SlackHarness({ apiTokens: API_TOKENS, clock: () => now, callbackSender: sender }).start();
  api = new ApiClient(harness.baseUrl);
});

afterEach(async () => {
  await harness.close();
});

async function threadOf(askId: string): Promise<string> {
  let thread = "";
  await waitFor(() => {
    const call = harness.slack
      .callsOf("chat.postMessage")
      .find((entry) => JSON.stringify(entry.params.blocks ?? "").includes(`ask:${askId}:`));
    thread = String(call?.params.thread_ts ?? "");
    return call !== undefined;
  }, "the card");
  await harness.engine.idle();
  return thread;
}

const callbackUrl = "https://ci.example.com/parley";

describe("API asks follow the rules of every ask", () => {
  it("times out at its deadline: the card is settled, GET and the callback say timeout", async () => {
    const id = String(
      (
        await api.create({
          channel: `slack:${CHANNEL}`,
          ask: { type: "confirm", question: "Quick?", timeout_s: 5 },
          callback_url: callbackUrl,
        })
      ).body.id,
    );
    await threadOf(id);
    now += 6000;
    expect(await harness.engine.sweep()).toBe(1);
    await harness.engine.idle();
    expect((await api.get(id)).body).toMatchObject({ status: "expired", result: { ok: false, timeout: true } });
    expect(sent).toHaveLength(1);
    expect(JSON.parse(sent[0]!.body)).toMatchObject({ id, status: "expired", result: { ok: false, timeout: true } });
    expect(sent[0]!.url).toBe(callbackUrl);
    expect(sent[0]!.headers["parley-signature"]).toMatch(/^v1=[0-9a-f]{64}$/);
  });

  it("a refused callback is retried with backoff by the sweeper, then never again once accepted", async () => {
    receiverStatus = 500;
    const id = String((await api.create({ channel: `slack:${CHANNEL}`, ask: { question: "Notes?" }, callback_url: callbackUrl })).body.id);
    await threadOf(id);
    await api.cancel(id);
    await harness.engine.idle();
    expect(sent).toHaveLength(1);
    // Not due yet: the first retry waits 5 s.
    await harness.engine.sweep();
    await harness.engine.idle();
    expect(sent).toHaveLength(1);
    now += 5000;
    await harness.engine.sweep();
    await harness.engine.idle();
    expect(sent).toHaveLength(2);
    receiverStatus = 204;
    now += 10_000;
    await harness.engine.sweep();
    await harness.engine.idle();
    expect(sent).toHaveLength(3);
    now += 60 * 60_000;
    await harness.engine.sweep();
    await harness.engine.idle();
    expect(sent).toHaveLength(3);
    expect((await harness.store.getExternalAsk(id))?.callbackOutcome).toBe("delivered");
  });

  it("a receiver that does not answer holds up its own callback only", async () => {
    let release: (() => void) | undefined;
    const slow = "https://slow.example.com/hook";
    const hanging: CallbackSender = {
      send: (url, body, headers) =>
        url === slow ? new Promise<number>((resolve) => (release = () => resolve(200))) : sender.send(url, body, headers),
    };
    await harness.close();
    harness = await new SlackHarness({ apiTokens: API_TOKENS, clock: () => now, callbackSender: hanging }).start();
    api = new ApiClient(harness.baseUrl);
    const first = String((await api.create({ channel: `slack:${CHANNEL}`, ask: { question: "A?" }, callback_url: slow })).body.id);
    const second = String((await api.create({ channel: `slack:${CHANNEL}`, ask: { question: "B?" }, callback_url: callbackUrl })).body.id);
    await threadOf(first);
    await threadOf(second);
    await api.cancel(first);
    await waitFor(() => release !== undefined, "the hanging delivery");
    await api.cancel(second);
    await waitFor(() => sent.some((entry) => JSON.parse(entry.body).id === second), "the second callback, while the first hangs");
    release!();
    await harness.engine.idle();
    expect((await harness.store.getExternalAsk(first))?.callbackOutcome).toBe("delivered");
  });

  it("a callback is given up 24 h after the ask ended", async () => {
    receiverStatus = 503;
    const id = String((await api.create({ channel: `slack:${CHANNEL}`, ask: { question: "Notes?" }, callback_url: callbackUrl })).body.id);
    await threadOf(id);
    await api.cancel(id);
    await harness.engine.idle();
    now += 24 * 60 * 60_000 + 1;
    await harness.engine.sweep();
    await harness.engine.idle();
    expect((await harness.store.getExternalAsk(id))?.callbackOutcome).toBe("given-up");
    const attempts = sent.length;
    now += 60 * 60_000;
    await harness.engine.sweep();
    await harness.engine.idle();
    expect(sent).toHaveLength(attempts);
  });

  it("@Parley stop in the thread cancels the question; the session is free for the next one", async () => {
    const id = String((await api.create({ channel: `slack:${CHANNEL}`, ask: { type: "confirm", question: "Go?" } })).body.id);
    const thread = await threadOf(id);
    const stop = messageEvent("app_mention", { user: ALICE, text: `<@${FAKE_BOT_USER_ID}> stop`, threadTs: thread });
    await harness.sender.event(stop, { teamId: "T_PARLEY", eventId: "EvStop1" });
    await waitFor(() => harness.engineCalls.some((call) => call.method === "handleMessage"), "the stop");
    await harness.engine.idle();
    expect((await api.get(id)).body).toMatchObject({
      status: "cancelled",
      result: { ok: false, cancelled: true },
      answered_by: `slack:${ALICE}`,
    });
    expect((await api.create({ channel: `slack:${CHANNEL}`, thread, ask: { question: "Next?" } })).status).toBe(201);
    expect(harness.anthropic.requests).toHaveLength(0);
  });

  it("/parley sessions lists a waiting API ask with its token's name, and an admin can answer it", async () => {
    const id = String((await api.create({ channel: `slack:${CHANNEL}`, ask: { question: "Tag name?", type: "input" } })).body.id);
    await threadOf(id);
    await harness.sender.command(slashCommand(CAROL_ADMIN, "sessions", harness.responseUrl));
    await waitFor(() => harness.slack.responses.length > 0, "the listing");
    const listing = JSON.stringify(harness.slack.responses.at(-1)!.body);
    expect(listing).toContain("token `ci`");
    expect(listing).toContain(id);
    await harness.sender.command(slashCommand(CAROL_ADMIN, `answer ${id} v1.4.0`, harness.responseUrl));
    await waitFor(() => harness.slack.responses.length > 1, "the answer reply");
    expect((await api.get(id, 5)).body).toMatchObject({
      status: "answered",
      result: { ok: true, value: "v1.4.0" },
      answered_by: `slack:${CAROL_ADMIN}`,
    });
  });
});
