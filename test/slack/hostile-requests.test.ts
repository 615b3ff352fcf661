import { request } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SLACK_MAX_BODY_BYTES } from "../../adapters/slack/slack-limits.js";
import { ask, reply } from "../fakes/fake-anthropic.js";
import { FAKE_BOT_USER_ID } from "../fakes/fake-slack-api.js";
import { FAKE_SIGNING_SECRET, signSlackRequest } from "../fakes/fake-slack-signer.js";
import { ALICE, type PostedCard, SlackHarness } from "./slack-harness.js";
import { blockActions, CHANNEL, messageEvent, nextTs } from "./slack-payloads.js";

let harness: SlackHarness;
let card: PostedCard;
let thread: string;

beforeEach(async () => {
  harness = await new SlackHarness().start();
  harness.anthropic.script(ask({ type: "confirm", question: "Drop the cache?" }), reply("done"));
  thread = nextTs();
  await harness.sender.event(messageEvent("app_mention", { user: ALICE, text: `<@${FAKE_BOT_USER_ID}> clean up`, ts: thread }), {
    teamId: "T_PARLEY",
    eventId: "EvHostile1",
  });
  await harness.settle("handleMessage", 1);
  card = harness.card(thread);
});

afterEach(async () => {
  await harness.close();
});

/** The owner's Yes tap, form-encoded exactly as Slack sends it. */
function yesTapBody(): string {
  const payload = blockActions({
    user: ALICE,
    actionId: card.actionIds[0]!,
    channel: CHANNEL,
    cardTs: card.ts,
    threadTs: thread,
    responseUrl: harness.responseUrl,
  });
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
}

function post(body: string, headers: Record<string, string>): Promise<Response> {
  const url = `http://127.0.0.1:${harness.adapter.port}/slack/events`;
  return fetch(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", ...headers }, body });
}

const now = () => Math.floor(Date.now() / 1000);

/**
 * Streams a chunked body (no Content-Length) until the server answers or twice the limit has gone out, then
 * hangs up: the server stops reading at the limit, so the rest of the body would never drain.
 */
function streamUntilAnswered(port: number, headers: Record<string, string>): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const piece = Buffer.alloc(64 * 1024, "x");
    let sent = 0;
    const outgoing = request({
      host: "127.0.0.1",
      port,
      method: "POST",
      path: "/slack/events",
      headers: { ...headers, "content-type": "application/json" },
    });
    outgoing.on("response", (response) => {
      resolve(response.statusCode);
      outgoing.destroy();
    });
    outgoing.on("error", (error) => (sent > SLACK_MAX_BODY_BYTES ? undefined : reject(error)));
    const pump = () => {
      while (sent <= SLACK_MAX_BODY_BYTES * 2 && !outgoing.destroyed) {
        sent += piece.length;
        if (!outgoing.write(piece)) return void outgoing.once("drain", pump);
      }
      if (!outgoing.destroyed) outgoing.end();
    };
    pump();
  });
}

/** What a refused request must leave untouched: the engine, the model, the card and the Slack API. */
async function expectNothingChanged(): Promise<void> {
  await harness.engine.idle();
  expect(harness.engineCalls.map((call) => call.method)).toEqual(["handleMessage"]);
  expect(harness.anthropic.requests).toHaveLength(1);
  expect((await harness.store.getAsk(card.askId))?.status).toBe("pending");
  expect(harness.updatesOf(card.ts)).toHaveLength(0);
  expect(harness.slack.callsOf("chat.postEphemeral")).toHaveLength(0);
}

describe("Slack request authenticity", () => {
  it("missing or malformed signature headers get 401 and change nothing", async () => {
    const body = yesTapBody();
    const signed = signSlackRequest(FAKE_SIGNING_SECRET, body, now());
    const timestamp = signed["x-slack-request-timestamp"]!;
    const signature = signed["x-slack-signature"]!;
    const statuses = await Promise.all([
      post(body, {}),
      post(body, { "x-slack-request-timestamp": timestamp }),
      post(body, { "x-slack-signature": signature }),
      post(body, { "x-slack-signature": signature.replace("v0=", "v1="), "x-slack-request-timestamp": timestamp }),
      post(body, { "x-slack-signature": "v0=", "x-slack-request-timestamp": timestamp }),
      post(body, { "x-slack-signature": signature, "x-slack-request-timestamp": "yesterday" }),
      post(body, { "x-slack-signature": signature.toUpperCase(), "x-slack-request-timestamp": timestamp }),
    ]);
    expect(statuses.map((response) => response.status)).toEqual([401, 401, 401, 401, 401, 401, 401]);
    await expectNothingChanged();
  });

  it("a replay of an old request is refused, whether it keeps its old timestamp or claims a fresh one", async () => {
    const body = yesTapBody();
    const sixMinutesAgo = now() - 360;
    const captured = signSlackRequest(FAKE_SIGNING_SECRET, body, sixMinutesAgo);
    const replayed = await post(body, captured);
    const refreshed = await post(body, { ...captured, "x-slack-request-timestamp": String(now()) });
    expect([replayed.status, refreshed.status]).toEqual([401, 401]);
    await expectNothingChanged();
  });

  it("a body signed for one request cannot carry another", async () => {
    const body = yesTapBody();
    const headers = signSlackRequest(FAKE_SIGNING_SECRET, body, now());
    const tampered = await post(body.replace(encodeURIComponent(ALICE), encodeURIComponent("U_MALLORY")), headers);
    expect(tampered.status).toBe(401);
    await expectNothingChanged();
  });

  it("a valid tap replayed within the five-minute window answers once and resumes the model once", async () => {
    const body = yesTapBody();
    const headers = signSlackRequest(FAKE_SIGNING_SECRET, body, now());
    expect((await post(body, headers)).status).toBe(200);
    await harness.settle("answer", 1);
    expect((await post(body, headers)).status).toBe(200);
    const answers = await harness.settle("answer", 2);
    expect(answers.map((call) => (call.result as { kind: string }).kind)).toEqual(["accepted", "already-ended"]);
    expect(harness.anthropic.requests).toHaveLength(2);
    expect(harness.updatesOf(card.ts)).toHaveLength(1);
    expect(harness.posted(thread).filter((call) => call.params.text === "done")).toHaveLength(1);
  });
});

describe("oversized bodies", () => {
  it("a correctly signed body over the limit gets 413 before it is read, and changes nothing", async () => {
    const payload = { type: "block_actions", user: { id: ALICE }, actions: [{ action_id: card.actionIds[0] }], padding: "x" };
    const body = new URLSearchParams({
      payload: JSON.stringify({ ...payload, padding: "x".repeat(SLACK_MAX_BODY_BYTES + 1024) }),
    }).toString();
    const response = await post(body, signSlackRequest(FAKE_SIGNING_SECRET, body, now()));
    expect(response.status).toBe(413);
    await expectNothingChanged();
  });

  it("the same holds for a streamed body that declares no length", async () => {
    const status = await streamUntilAnswered(harness.adapter.port!, signSlackRequest(FAKE_SIGNING_SECRET, "", now()));
    expect(status).toBe(413);
    await expectNothingChanged();
  });

  it("a large payload under the limit is still served", async () => {
    const body = yesTapBody().concat(`&padding=${"y".repeat(200 * 1024)}`);
    expect((await post(body, signSlackRequest(FAKE_SIGNING_SECRET, body, now()))).status).toBe(200);
    await harness.settle("answer", 1);
    expect(harness.anthropic.requests).toHaveLength(2);
  });
});
