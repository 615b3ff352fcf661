import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ask, lastToolResults, reply } from "../fakes/fake-anthropic.js";
import { FAKE_BOT_USER_ID } from "../fakes/fake-slack-api.js";
import { ALICE, type PostedCard, SlackHarness } from "./slack-harness.js";
import { type ActionShape, blockActions, CHANNEL, messageEvent, nextTs, viewSubmission } from "./slack-payloads.js";

let harness: SlackHarness;
let eventCounter = 0;

beforeEach(async () => {
  harness = await new SlackHarness().start();
});

afterEach(async () => {
  await harness.close();
});

/** Mentions the bot with one scripted ask, waits for its card and returns it with its thread. */
async function cardFor(input: unknown): Promise<{ card: PostedCard; thread: string }> {
  harness.anthropic.script(ask(input), reply("thanks"));
  const thread = nextTs();
  await harness.sender.event(messageEvent("app_mention", { user: ALICE, text: `<@${FAKE_BOT_USER_ID}> help`, ts: thread }), {
    teamId: "T_PARLEY",
    eventId: `EvType${++eventCounter}`,
  });
  await harness.settle("handleMessage", 1);
  return { card: harness.card(thread), thread };
}

async function tap(card: PostedCard, thread: string, shape: Partial<ActionShape> & { actionId: string }): Promise<Response> {
  return harness.sender.interaction(
    blockActions({ user: ALICE, channel: CHANNEL, cardTs: card.ts, threadTs: thread, responseUrl: harness.responseUrl, ...shape }),
  );
}

function toolResult(): unknown {
  const results = lastToolResults(harness.anthropic.requests.at(-1));
  expect(results).toHaveLength(1);
  return JSON.parse(results[0]!.content);
}

function elementsOf(card: PostedCard): Array<Record<string, unknown>> {
  return card.blocks.filter((block) => block.type === "actions").flatMap((block) => block.elements as Array<Record<string, unknown>>);
}

function settledLine(card: PostedCard): string {
  return JSON.stringify(harness.updatesOf(card.ts).at(-1)?.params.blocks ?? null);
}

describe("every ask type as Block Kit", () => {
  it("confirm: Yes/No buttons; No is false", async () => {
    const { card, thread } = await cardFor({ type: "confirm", question: "Delete the branch?" });
    expect(elementsOf(card).map((element) => (element.text as { text: string }).text)).toEqual(["Yes", "No", "Cancel", "Stop"]);
    await tap(card, thread, { actionId: card.actionIds[1]! });
    await harness.settle("answer", 1);
    expect(toolResult()).toEqual({ ok: true, value: false });
    expect(settledLine(card)).toContain("✅ No — answered by");
  });

  it("select with seven options: radio buttons; the picked option's value comes back", async () => {
    const options = ["a", "b", "c", "d", "e", "f", { value: "g-value", label: "Gee" }];
    const { card, thread } = await cardFor({ type: "select", question: "Pick a letter", options });
    const radio = elementsOf(card)[0]!;
    expect(radio.type).toBe("radio_buttons");
    expect((radio.options as unknown[]).length).toBe(7);
    await tap(card, thread, { actionId: String(radio.action_id), type: "radio_buttons", selectedOption: "6" });
    await harness.settle("answer", 1);
    expect(toolResult()).toEqual({ ok: true, value: "g-value" });
    expect(settledLine(card)).toContain("✅ Gee");
  });

  it("select with forty options: a static select", async () => {
    const options = Array.from({ length: 40 }, (_, index) => `option ${index}`);
    const { card, thread } = await cardFor({ type: "select", question: "Which one?", options });
    const select = elementsOf(card)[0]!;
    expect(select.type).toBe("static_select");
    await tap(card, thread, { actionId: String(select.action_id), type: "static_select", selectedOption: "39" });
    await harness.settle("answer", 1);
    expect(toolResult()).toEqual({ ok: true, value: "option 39" });
  });

  it("multiselect: checkboxes and Done; the ticked values come back", async () => {
    const { card, thread } = await cardFor({ type: "multiselect", question: "Which services?", options: ["api", "web", "worker"] });
    const [checkboxes, done] = elementsOf(card);
    expect(checkboxes!.type).toBe("checkboxes");
    expect((done!.text as { text: string }).text).toBe("Done");
    // Ticking a box is only acknowledged; the answer is read when Done is tapped.
    await tap(card, thread, { actionId: String(checkboxes!.action_id), type: "checkboxes", selectedOptions: ["0"] });
    await tap(card, thread, { actionId: String(done!.action_id), state: { [String(checkboxes!.action_id)]: ["0", "2"] } });
    await harness.settle("answer", 1);
    expect(toolResult()).toEqual({ ok: true, value: ["api", "worker"] });
    expect(settledLine(card)).toContain("✅ api, worker");
  });

  it("buttons: one button per option", async () => {
    const { card, thread } = await cardFor({ type: "buttons", question: "Size?", options: ["S", "M", "L"] });
    expect(elementsOf(card).map((element) => (element.text as { text: string }).text)).toEqual(["S", "M", "L", "Cancel", "Stop"]);
    await tap(card, thread, { actionId: card.actionIds[2]! });
    await harness.settle("answer", 1);
    expect(toolResult()).toEqual({ ok: true, value: "L" });
  });

  it("message: Continue acknowledges", async () => {
    const { card, thread } = await cardFor({ type: "message", question: "The deploy window opens at 5pm." });
    expect(elementsOf(card).map((element) => (element.text as { text: string }).text)).toEqual(["Continue", "Cancel", "Stop"]);
    await tap(card, thread, { actionId: card.actionIds[0]! });
    await harness.settle("answer", 1);
    expect(toolResult()).toEqual({ ok: true, value: "acknowledged" });
    expect(settledLine(card)).toContain("✅ Continued");
  });

  it("input: Answer opens a modal whose submission is the answer", async () => {
    const { card, thread } = await cardFor({ type: "input", question: "What should the release be called?", default: "v2" });
    expect((elementsOf(card)[0]!.text as { text: string }).text).toBe("Answer");
    await tap(card, thread, { actionId: card.actionIds[0]! });
    await waitForModal();
    const opened = harness.slack.callsOf("views.open")[0]!;
    expect(opened.ok).toBe(true);
    const view = opened.params.view as Record<string, unknown>;
    expect(JSON.stringify(view)).toContain('"initial_value":"v2"');
    const response = await harness.sender.interaction(
      viewSubmission(ALICE, view, { answer: { type: "plain_text_input", value: "Aurora" } }),
    );
    expect(response.status).toBe(200);
    await harness.settle("answer", 1);
    expect(toolResult()).toEqual({ ok: true, value: "Aurora" });
    expect(settledLine(card)).toContain("✅ Aurora");
  });

  it("a modal submitted after the question was answered in the thread turns into a notice and changes nothing", async () => {
    const { card, thread } = await cardFor({ type: "input", question: "Which ticket?" });
    await tap(card, thread, { actionId: card.actionIds[0]! });
    await waitForModal();
    const view = harness.slack.callsOf("views.open")[0]!.params.view as Record<string, unknown>;
    await harness.sender.event(messageEvent("message", { user: ALICE, text: "PAR-42", threadTs: thread }), {
      teamId: "T_PARLEY",
      eventId: "EvReply",
    });
    await harness.settle("handleMessage", 2);
    const late = await harness.sender.interaction(viewSubmission(ALICE, view, { answer: { type: "plain_text_input", value: "PAR-7" } }));
    const body = (await late.json()) as { response_action: string; view: { blocks: unknown[] } };
    expect(body.response_action).toBe("update");
    expect(JSON.stringify(body.view.blocks)).toContain("This question was already answered.");
    await harness.engine.idle();
    expect(toolResult()).toEqual({ ok: true, value: "PAR-42" });
    expect(harness.anthropic.requests).toHaveLength(2);
  });

  it("form: field errors keep the modal open; a valid submit sends the secret to the model only", async () => {
    const fields = [
      { name: "host", label: "Host", type: "text", required: true },
      { name: "token", label: "API token", type: "password", required: true },
      { name: "port", label: "Port", type: "number" },
      { name: "tls", label: "Use TLS", type: "toggle" },
    ];
    const { card, thread } = await cardFor({ type: "form", question: "Connection details?", fields });
    expect((elementsOf(card)[0]!.text as { text: string }).text).toBe("Fill in");
    await tap(card, thread, { actionId: card.actionIds[0]! });
    await waitForModal();
    const view = harness.slack.callsOf("views.open")[0]!.params.view as Record<string, unknown>;
    const viewText = JSON.stringify(view);
    expect(viewText).toContain("number_input");
    expect(viewText).toContain("Slack cannot hide what you type here");

    const blank = await harness.sender.interaction(
      viewSubmission(ALICE, view, {
        "field-host": { type: "plain_text_input", value: null },
        "field-token": { type: "plain_text_input", value: "s3cr3t-value" },
        "field-port": { type: "number_input", value: null },
        "field-tls": { type: "checkboxes", selected_options: [] },
      }),
    );
    expect(await blank.json()).toEqual({ response_action: "errors", errors: { "field-host": "Host is required." } });
    expect(harness.anthropic.requests).toHaveLength(1);

    const filled = await harness.sender.interaction(
      viewSubmission(ALICE, view, {
        "field-host": { type: "plain_text_input", value: "db.internal" },
        "field-token": { type: "plain_text_input", value: "s3cr3t-value" },
        "field-port": { type: "number_input", value: "5432" },
        "field-tls": { type: "checkboxes", selected_options: [{ value: "on" }] },
      }),
    );
    expect(filled.status).toBe(200);
    await harness.settle("answer", 2);
    expect(toolResult()).toEqual({ ok: true, value: { host: "db.internal", token: "s3cr3t-value", port: 5432, tls: true } });
    expect(settledLine(card)).toContain("API token: ••••");
    expect(JSON.stringify(harness.slack.calls.map((call) => call.params))).not.toContain("s3cr3t-value");
  });

  it("a question longer than a section goes out whole in one markdown block, within Slack's limits", async () => {
    const question = `${"Please read this carefully. ".repeat(280)}Proceed?`;
    const { card } = await cardFor({ type: "confirm", question });
    expect(card.blocks.filter((block) => block.type === "markdown")).toEqual([{ type: "markdown", text: question }]);
    expect(
      harness.slack.calls.every((call) => call.ok || call.error === "ratelimited" || call.method === "assistant.threads.setStatus"),
    ).toBe(true);
  });
});

async function waitForModal(): Promise<void> {
  const { waitFor } = await import("./slack-harness.js");
  await waitFor(() => harness.slack.callsOf("views.open").length > 0, "views.open");
}
