import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { actionIds } from "../../adapters/slack/action-ids.js";
import { ANSWER_MODAL_CALLBACK_ID } from "../../adapters/slack/render-modal.js";
import { ask, reply } from "../fakes/fake-anthropic.js";
import { FAKE_BOT_USER_ID } from "../fakes/fake-slack-api.js";
import { ALICE, BOB, type PostedCard, SlackHarness } from "./slack-harness.js";
import { blockActions, CHANNEL, messageEvent, nextTs, viewSubmission } from "./slack-payloads.js";

/** End-to-end cases are slow (a real HTTP round trip each): a tenth of FUZZ_RUNS, at most 100. */
const RUNS = Math.min(100, Math.max(10, Math.floor(Number(process.env.FUZZ_RUNS ?? 300) / 10)));
/**
 * What a signed request Parley cannot use may get: 200 (acknowledged, ignored), 400 (refused by the adapter's
 * guard: not a JSON object, or an envelope without what Bolt reads), or 404 (no listener matched).
 * Never a 500, a hang, a crash or a state change.
 */
const CLEAN_STATUSES = [200, 400, 404];

let harness: SlackHarness;
let card: PostedCard;
let thread: string;

beforeEach(async () => {
  harness = await new SlackHarness().start();
  harness.anthropic.script(ask({ type: "input", question: "Release name?" }), reply("named"));
  thread = nextTs();
  await harness.sender.event(messageEvent("app_mention", { user: ALICE, text: `<@${FAKE_BOT_USER_ID}> name it`, ts: thread }), {
    teamId: "T_PARLEY",
    eventId: "EvMalformed1",
  });
  await harness.settle("handleMessage", 1);
  card = harness.card(thread);
});

afterEach(async () => {
  await harness.close();
});

const form = (fields: Record<string, string>) =>
  harness.sender.send(new URLSearchParams(fields).toString(), "application/x-www-form-urlencoded");

function tap(actionId: string, user = ALICE): Record<string, unknown> {
  return blockActions({ user, actionId, channel: CHANNEL, cardTs: card.ts, threadTs: thread, responseUrl: harness.responseUrl });
}

/** Nothing a malformed request does may reach the model, settle the card, open a modal or answer the ask. */
async function expectNothingChanged(): Promise<void> {
  await harness.engine.idle();
  expect(harness.anthropic.requests).toHaveLength(1);
  expect((await harness.store.getAsk(card.askId))?.status).toBe("pending");
  expect(harness.updatesOf(card.ts)).toHaveLength(0);
  expect(harness.slack.callsOf("views.open")).toHaveLength(0);
  const answers = harness.engineCalls.filter((call) => call.method !== "handleMessage");
  for (const call of answers) expect((call.result as { kind: string }).kind).not.toBe("accepted");
}

/** The bot still works afterwards: the owner answers through the modal and the model resumes. */
async function expectStillServing(): Promise<void> {
  await harness.sender.interaction(tap(card.actionIds[0]!));
  const view = await waitForModal();
  const submitted = viewSubmission(ALICE, view, { answer: { type: "plain_text_input", value: "Aurora" } });
  expect((await harness.sender.interaction(submitted)).status).toBe(200);
  await harness.engine.idle();
  expect(harness.anthropic.requests).toHaveLength(2);
}

async function waitForModal(): Promise<Record<string, unknown>> {
  for (let attempt = 0; attempt < 500; attempt++) {
    const opened = harness.slack.callsOf("views.open")[0];
    if (opened) return opened.params.view as Record<string, unknown>;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("no modal opened");
}

describe("malformed but correctly signed Slack requests", () => {
  it("bad JSON, wrong shapes, unknown action ids and missing fields get a clean answer and change nothing", async () => {
    const base = tap(card.actionIds[0]!);
    const { user: _user, ...withoutUser } = base;
    const { actions: _actions, ...withoutActions } = base;
    const metadata = (askId: unknown) => ({ callback_id: ANSWER_MODAL_CALLBACK_ID, private_metadata: JSON.stringify({ askId }) });
    const typed = { answer: { type: "plain_text_input", value: "x" } };
    const responses = await Promise.all([
      form({ payload: "{not json" }),
      form({ payload: "" }),
      form({ payload: "null" }),
      form({ payload: '"just a string"' }),
      form({ payload: "[1,2,3]" }),
      form({ payload: '{"type":"block_actions"}' }),
      form({ payload: '{"__proto__":{"polluted":true},"type":"block_actions","actions":[{"action_id":"ask:x:done"}]}' }),
      harness.sender.send("{not json", "application/json"),
      harness.sender.send('{"type":"event_callback","event":null}', "application/json"),
      harness.sender.interaction(tap("ask:NoSuchAsk:frobnicate")),
      harness.sender.interaction(tap("somebody-elses-button")),
      harness.sender.interaction(tap(actionIds.open("NoSuchAsk123"))),
      harness.sender.interaction(tap(actionIds.option("NoSuchAsk123", 0))),
      harness.sender.interaction(tap(`ask:${card.askId}:opt:99999`)),
      harness.sender.interaction({ ...base, trigger_id: undefined }),
      harness.sender.interaction(withoutUser),
      harness.sender.interaction(withoutActions),
      harness.sender.interaction({ ...base, actions: [] }),
      harness.sender.interaction({ ...base, actions: [{ action_id: 42 }] }),
      harness.sender.interaction(viewSubmission(ALICE, { callback_id: ANSWER_MODAL_CALLBACK_ID, private_metadata: "{" }, typed)),
      harness.sender.interaction(viewSubmission(ALICE, { callback_id: ANSWER_MODAL_CALLBACK_ID }, typed)),
      harness.sender.interaction(viewSubmission(ALICE, metadata("NoSuchAsk123"), typed)),
      harness.sender.interaction(viewSubmission(ALICE, metadata({ nested: card.askId }), typed)),
      harness.sender.interaction(viewSubmission(BOB, metadata(card.askId), typed)),
      harness.sender.event({ type: "message", channel: CHANNEL, text: 42, ts: nextTs() }, { teamId: "T_PARLEY", eventId: "EvBad1" }),
      harness.sender.event({ type: "message" }, { teamId: "T_PARLEY", eventId: "EvBad2" }),
      form({ command: "/parley" }),
    ]);
    for (const response of responses) expect(CLEAN_STATUSES).toContain(response.status);
    // Bad JSON, an empty payload, null, a string and an array: refused by the guard, not left hanging inside Bolt.
    expect(responses.slice(0, 5).map((response) => response.status)).toEqual([400, 400, 400, 400, 400]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    await expectNothingChanged();
    await expectStillServing();
  });

  it("fuzzed near-valid taps and submissions from someone who may not answer change nothing", async () => {
    const nasty = fc.oneof(
      fc.string(),
      fc.constantFrom("__proto__", "<!channel>", "'; DROP TABLE asks; --", card.askId, "\u0000"),
      fc.integer({ min: 3000, max: 20_000 }).map((length) => "x".repeat(length)),
    );
    const actionId = fc.oneof(
      fc.constantFrom(...card.actionIds),
      nasty.map((text) => `ask:${card.askId}:${text}`),
      nasty,
    );
    const payload = fc.oneof(
      fc.record({ actionId, value: nasty }).map((shape) => ({ ...tap(shape.actionId, BOB), value: shape.value })),
      fc
        .record({ metadata: fc.oneof(nasty, fc.constant(JSON.stringify({ askId: card.askId }))), value: nasty })
        .map((shape) =>
          viewSubmission(
            BOB,
            { callback_id: ANSWER_MODAL_CALLBACK_ID, private_metadata: shape.metadata.slice(0, 3000) },
            { answer: { type: "plain_text_input", value: shape.value } },
          ),
        ),
    );
    const responses = await Promise.all(fc.sample(payload, RUNS).map((body) => harness.sender.interaction(body)));
    for (const response of responses) expect(CLEAN_STATUSES).toContain(response.status);
    await expectNothingChanged();
    await expectStillServing();
  });
});
