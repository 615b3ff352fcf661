import { afterEach, describe, expect, it } from "vitest";
import { ask, reply } from "../fakes/fake-anthropic.js";
import { FAKE_DISCORD_TOKEN } from "../fakes/fake-discord.js";
import { databaseBytes, LogCapture } from "../support/capture.js";
import { ALICE, componentWith, DiscordHarness } from "./discord-harness.js";

const PASSWORD = "hunter2-Quartz-Zebra-7781";

let harness: DiscordHarness;
let capture = new LogCapture();

afterEach(async () => {
  await harness.close();
});

function capturingLogger() {
  capture = new LogCapture();
  return capture.logger;
}

describe("secrets on Discord", () => {
  it("the bot token and a password answer appear in no log line, database byte or payload sent to Discord", async () => {
    harness = await new DiscordHarness({ logger: capturingLogger() }).start();
    const fields = [
      { name: "user", label: "User", type: "text", required: true },
      { name: "password", label: "Password", type: "password", required: true },
      { name: "port", label: "Port", type: "number", required: true },
    ];
    harness.anthropic.script(ask({ type: "form", question: "Credentials for the deploy?", fields }), (request) => {
      expect(JSON.stringify(request.body.messages)).toContain(PASSWORD);
      return reply("Deployed.");
    });
    const thread = await harness.mention(ALICE, "deploy");
    const card = await harness.card(thread);
    // A tap the bot does not recognise and an invalid submit exercise the refusal and error paths too.
    harness.discord.click(ALICE, card, "not-a-parley-button");
    harness.discord.click(ALICE, card, componentWith(card, /:open$/).custom_id);
    const modal = await harness.until("the form modal", () => harness.discord.modals[0]);
    harness.discord.submitModal(ALICE, modal, { "field:user": "ops", "field:password": PASSWORD, "field:port": "fifty" });
    const error = await harness.until("the field error", () =>
      harness.discord.ephemeralsFor(ALICE.id).find((entry) => /Port/.test(String(entry.content))),
    );
    // "Fix" reopens the form prefilled with what was typed, except the password.
    harness.discord.click(ALICE, error, componentWith(error, /:open$/).custom_id);
    const fix = await harness.until("the reopened modal", () => harness.discord.modals[1]);
    expect(JSON.stringify(fix.data)).toContain("fifty");
    harness.discord.submitModal(ALICE, fix, { "field:user": "ops", "field:password": PASSWORD, "field:port": "5432" });
    await harness.botSays(thread, /^Deployed\.$/);
    expect(String(harness.discord.message(String(card.id))?.content)).toContain("Password: ••••");

    const sent = JSON.stringify([
      harness.discord.calls,
      harness.discord.callbacks,
      harness.discord.ephemerals,
      harness.discord.modals,
      harness.discord.messagesIn(thread),
    ]);
    expect(sent).toContain("ops");
    for (const secret of [FAKE_DISCORD_TOKEN, PASSWORD]) {
      expect(sent.includes(secret), `a Discord payload holds ${secret}`).toBe(false);
      expect(capture.text.includes(secret), `the log holds ${secret}`).toBe(false);
    }
    expect(capture.text.length).toBeGreaterThan(0);
    // Every commit is on disk (database or WAL) by now, so the files can be scanned while the store is open.
    const stored = databaseBytes(harness.database.path);
    expect(stored.includes("Credentials for the deploy?")).toBe(true);
    for (const secret of [FAKE_DISCORD_TOKEN, PASSWORD]) expect(stored.includes(secret), `the database holds ${secret}`).toBe(false);
  });
});
