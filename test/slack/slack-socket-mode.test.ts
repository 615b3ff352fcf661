import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ask, lastToolResults, reply } from "../fakes/fake-anthropic.js";
import { FAKE_BOT_USER_ID, FAKE_TEAM_ID } from "../fakes/fake-slack-api.js";
import { ALICE, SlackHarness, waitFor } from "./slack-harness.js";
import { CHANNEL, cardTap, messageEvent, nextTs, viewSubmission } from "./slack-payloads.js";

let harness: SlackHarness;

beforeEach(async () => {
  harness = await new SlackHarness({ socketMode: true }).start();
});

afterEach(async () => {
  await harness.close();
});

function eventEnvelope(event: Record<string, unknown>, eventId: string): Record<string, unknown> {
  return {
    token: "unused",
    team_id: FAKE_TEAM_ID,
    api_app_id: "A_PARLEY",
    type: "event_callback",
    event_id: eventId,
    event_time: 1,
    event,
  };
}

describe("Socket Mode", () => {
  it("connects through apps.connections.open with the app token and runs the same round trip", async () => {
    expect(harness.slack.callsOf("apps.connections.open").filter((call) => call.ok)).toHaveLength(1);
    // Connected, and no HTTP listener of its own: the composition root serves /healthz and /readyz in Socket Mode.
    expect(harness.adapter.connected()).toBe(true);
    expect(harness.adapter.port).toBeUndefined();
    harness.anthropic.script(ask({ question: "Which branch?", candidates: ["main", "next"] }), reply("Merged into next."));
    const thread = nextTs();
    const eventAck = await harness.socket.send(
      "events_api",
      eventEnvelope(messageEvent("app_mention", { user: ALICE, text: `<@${FAKE_BOT_USER_ID}> merge it`, ts: thread }), "EvSocket1"),
    );
    expect(eventAck.envelope_id).toBeDefined();
    await harness.settle("handleMessage", 1);
    const card = harness.card(thread);

    await harness.socket.send("interactive", cardTap({ card, thread, user: ALICE, button: 1, responseUrl: harness.responseUrl }));
    await harness.settle("answer", 1);
    const results = lastToolResults(harness.anthropic.requests.at(-1));
    expect(JSON.parse(results[0]!.content)).toEqual({ ok: true, value: "next" });
    expect(harness.posted(thread).at(-1)!.params.text).toBe("Merged into next.");
    expect(JSON.stringify(harness.updatesOf(card.ts).at(-1)!.params.blocks)).toContain("✅ next");
  });

  it("acknowledges an event's envelope only once the event is stored", async () => {
    harness.slack.latency.set("users.info", 400);
    harness.anthropic.script(reply("Hello."));
    const thread = nextTs();
    const started = Date.now();
    await harness.socket.send(
      "events_api",
      eventEnvelope(messageEvent("app_mention", { user: ALICE, text: `<@${FAKE_BOT_USER_ID}> hi`, ts: thread }), "EvSocketHeld"),
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    expect(await harness.store.hasEvent(`slack:${CHANNEL}:${thread}`)).toBe(true);
    await harness.settle("handleMessage", 1);
  });

  it("returns modal field errors in the envelope ack", async () => {
    harness.anthropic.script(
      ask({ type: "form", question: "Who is on call?", fields: [{ name: "person", label: "Person", type: "text", required: true }] }),
    );
    const thread = nextTs();
    await harness.socket.send(
      "events_api",
      eventEnvelope(messageEvent("app_mention", { user: ALICE, text: `<@${FAKE_BOT_USER_ID}> rota`, ts: thread }), "EvSocket2"),
    );
    await harness.settle("handleMessage", 1);
    const card = harness.card(thread);
    await harness.socket.send("interactive", cardTap({ card, thread, user: ALICE, button: 0, responseUrl: harness.responseUrl }));
    await waitFor(() => harness.slack.callsOf("views.open").length === 1, "views.open");
    const view = harness.slack.callsOf("views.open")[0]!.params.view as Record<string, unknown>;
    const ack = await harness.socket.send(
      "interactive",
      viewSubmission(ALICE, view, { "field-person": { type: "plain_text_input", value: "  " } }),
    );
    expect(ack.payload).toEqual({ response_action: "errors", errors: { "field-person": "Person is required." } });
    expect((await harness.store.getAsk(card.askId))?.status).toBe("pending");
  });
});
