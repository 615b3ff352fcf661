import { afterEach, describe, expect, it } from "vitest";
import { ask, reply } from "../fakes/fake-anthropic.js";
import { FAKE_APP_TOKEN, FAKE_BOT_TOKEN, FAKE_BOT_USER_ID } from "../fakes/fake-slack-api.js";
import { FAKE_SIGNING_SECRET } from "../fakes/fake-slack-signer.js";
import { databaseBytes, LogCapture } from "../support/capture.js";
import { ALICE, SlackHarness, waitFor } from "./slack-harness.js";
import { messageEvent, nextTs, tapCard, viewSubmission } from "./slack-payloads.js";

const PASSWORD = "hunter2-Quartz-Zebra-7781";
const TOKENS = [FAKE_BOT_TOKEN, FAKE_APP_TOKEN, FAKE_SIGNING_SECRET];

let harness: SlackHarness;
let capture = new LogCapture();

afterEach(async () => {
  await harness?.close();
});

function capturingLogger() {
  capture = new LogCapture();
  return capture.logger;
}

function expectAbsent(haystack: string | Buffer, needles: string[], where: string): void {
  for (const needle of needles) expect(haystack.includes(needle), `${where} holds ${needle}`).toBe(false);
}

describe("secrets on Slack", () => {
  it("tokens and a password answer appear in no log line, database byte or payload sent to Slack", async () => {
    harness = await new SlackHarness({ logger: capturingLogger() }).start();
    const fields = [
      { name: "user", label: "User", type: "text", required: true },
      { name: "password", label: "Password", type: "password", required: true },
    ];
    harness.anthropic.script(ask({ type: "form", question: "Credentials for the deploy?", fields }), (request) => {
      expect(JSON.stringify(request.body.messages)).toContain(PASSWORD);
      return reply("Deployed.");
    });
    const thread = nextTs();
    await harness.sender.event(messageEvent("app_mention", { user: ALICE, text: `<@${FAKE_BOT_USER_ID}> deploy`, ts: thread }), {
      teamId: "T_PARLEY",
      eventId: "EvSecret1",
    });
    await harness.settle("handleMessage", 1);
    const card = harness.card(thread);
    await tapCard(harness.sender, { card, thread, user: ALICE, button: 0, responseUrl: harness.responseUrl });
    await waitFor(() => harness.slack.callsOf("views.open").length === 1, "the form modal");
    const view = harness.slack.callsOf("views.open")[0]!.params.view as Record<string, unknown>;
    // A refused request and malformed ones go through the logging paths too.
    await harness.sender.interaction({ type: "block_actions" }, { secret: "forged" });
    await harness.sender.send("payload=null", "application/x-www-form-urlencoded");
    await harness.sender.interaction({ type: "block_actions", actions: [{ action_id: "ask:x:done" }] });
    const submitted = await harness.sender.interaction(
      viewSubmission(ALICE, view, {
        "field-user": { type: "plain_text_input", value: "ops" },
        "field-password": { type: "plain_text_input", value: PASSWORD },
      }),
    );
    expect(submitted.status).toBe(200);
    await harness.settle("answer", 1);
    expect(harness.posted(thread).at(-1)?.params.text).toBe("Deployed.");
    expect(JSON.stringify(harness.updatesOf(card.ts).at(-1)?.params.blocks)).toContain("Password: ••••");

    await harness.engine.idle();
    const sentToSlack = JSON.stringify([harness.slack.calls, harness.slack.responses]);
    expect(sentToSlack).toContain("ops");
    expectAbsent(sentToSlack, [...TOKENS, PASSWORD], "a Slack payload");
    expect(capture.text.length).toBeGreaterThan(0);
    expectAbsent(capture.text, [...TOKENS, PASSWORD], "the log");
    // Every commit is on disk (database or WAL) by now, so the files can be scanned while the store is open.
    const stored = databaseBytes(harness.database.path);
    expect(stored.includes("Credentials for the deploy?")).toBe(true);
    expectAbsent(stored, [...TOKENS, PASSWORD], "the database");
  });

  it("in Socket Mode the app token travels only in the Authorization header", async () => {
    harness = await new SlackHarness({ socketMode: true, logger: capturingLogger() }).start();
    expect(harness.slack.callsOf("apps.connections.open").some((call) => call.ok)).toBe(true);
    expectAbsent(JSON.stringify(harness.slack.calls), TOKENS, "a Slack payload");
    expectAbsent(capture.text, TOKENS, "the log");
  });
});
