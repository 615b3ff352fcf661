import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ask, lastToolResults, reply } from "../fakes/fake-anthropic.js";
import { ALICE, componentWith, customIds, DiscordHarness } from "./discord-harness.js";

let harness: DiscordHarness;

beforeEach(async () => {
  harness = await new DiscordHarness().start();
});

afterEach(async () => {
  await harness.close();
});

/** Starts a session whose first model turn asks `input`, and returns the thread and the card. */
async function askInThread(input: unknown) {
  harness.anthropic.script(ask(input), reply("All set."));
  const thread = await harness.mention(ALICE, "help me");
  return { thread, card: await harness.card(thread) };
}

async function modelReads(thread: string): Promise<unknown> {
  await harness.botSays(thread, /All set\./);
  const results = lastToolResults(harness.anthropic.requests.at(-1));
  expect(results).toHaveLength(1);
  return JSON.parse(results[0]!.content);
}

function settledLine(card: Record<string, unknown>): string {
  const settled = harness.discord.message(String(card.id))!;
  expect(settled.components).toEqual([]);
  return String(settled.content).split("\n").at(-1) ?? "";
}

describe("each ask_user type, drawn and answered on Discord", () => {
  it("confirm: Yes and No buttons in success and danger styles", async () => {
    const { thread, card } = await askInThread({ type: "confirm", question: "Delete the old logs?" });
    const row = (card.components as Array<{ components: Array<{ label: string; style: number }> }>)[0]!;
    expect(row.components.map((button) => [button.label, button.style])).toEqual([
      ["Yes", 3],
      ["No", 4],
      ["Cancel", 2],
      ["Stop", 2],
    ]);
    harness.discord.click(ALICE, card, componentWith(card, /:opt:1$/).custom_id);
    expect(await modelReads(thread)).toEqual({ ok: true, value: false });
    expect(settledLine(card)).toBe(`✅ No — answered by <@${ALICE.id}>`);
  });

  it("select with 30 options: two select menus, the answer is the chosen option's value", async () => {
    const options = Array.from({ length: 30 }, (_, index) => ({ value: `region-${index + 1}`, label: `Region ${index + 1}` }));
    const { thread, card } = await askInThread({ type: "select", question: "Which region?", options });
    expect(customIds(card).filter((id) => id.includes(":pick:"))).toHaveLength(2);
    const second = componentWith(card, /:pick:1$/);
    expect(second.options).toHaveLength(5);
    harness.discord.choose(ALICE, card, second.custom_id, ["27"]);
    expect(await modelReads(thread)).toEqual({ ok: true, value: "region-28" });
    expect(settledLine(card)).toContain("✅ Region 28");
  });

  it("multiselect across two menus, then Done, sends every picked value", async () => {
    const options = Array.from({ length: 28 }, (_, index) => `tag${index}`);
    const { thread, card } = await askInThread({ type: "multiselect", question: "Which tags?", options });
    const first = componentWith(card, /:multi:0$/) as { custom_id: string; min_values?: number; max_values?: number };
    expect([first.min_values, first.max_values]).toEqual([0, 25]);
    const picks = harness.discord.choose(ALICE, card, first.custom_id, ["1", "3"]);
    expect((await harness.discord.callbackOf(picks)).type).toBe(6);
    harness.discord.choose(ALICE, card, componentWith(card, /:multi:1$/).custom_id, ["26"]);
    await harness.quiet();
    harness.discord.click(ALICE, card, componentWith(card, /:done$/).custom_id);
    expect(await modelReads(thread)).toEqual({ ok: true, value: ["tag1", "tag3", "tag26"] });
    expect(settledLine(card)).toContain("✅ tag1, tag3, tag26");
  });

  it("input: the Answer button opens a modal first, and its text reaches the model", async () => {
    const { thread, card } = await askInThread({ type: "input", question: "What should the release be called?" });
    const open = harness.discord.click(ALICE, card, componentWith(card, /:open$/).custom_id);
    expect((await harness.discord.callbackOf(open)).type).toBe(9);
    const modal = harness.discord.modals.at(-1)!;
    harness.discord.submitModal(ALICE, modal, { answer: "Aurora" });
    expect(await modelReads(thread)).toEqual({ ok: true, value: "Aurora" });
    expect(settledLine(card)).toBe(`✅ Aurora — answered by <@${ALICE.id}>`);
  });

  it("buttons: 7 options in two rows of at most 5, plus Other…, Cancel and Stop", async () => {
    const options = ["a", "b", "c", "d", "e", "f", "g"];
    const { thread, card } = await askInThread({ type: "buttons", question: "Pick a letter", options });
    const rows = card.components as Array<{ components: unknown[] }>;
    expect(rows.map((row) => row.components.length)).toEqual([5, 2, 3]);
    harness.discord.click(ALICE, card, componentWith(card, /:opt:6$/).custom_id);
    expect(await modelReads(thread)).toEqual({ ok: true, value: "g" });
  });

  it("message: Continue acknowledges", async () => {
    const { thread, card } = await askInThread({ type: "message", question: "The backup finished. Read the summary above." });
    harness.discord.click(ALICE, card, componentWith(card, /:continue$/).custom_id);
    expect(await modelReads(thread)).toEqual({ ok: true, value: "acknowledged" });
    expect(settledLine(card)).toContain("✅ Continued");
  });

  it("form with 7 fields: two chained modals, Continue (2/2), numbers and toggles parsed, the password masked on the card", async () => {
    const fields = [
      { name: "host", label: "Host", type: "text", required: true },
      { name: "port", label: "Port", type: "number", required: true },
      { name: "user", label: "User", type: "text" },
      { name: "secret", label: "Password", type: "password", required: true },
      { name: "tls", label: "Use TLS", type: "toggle" },
      { name: "region", label: "Region", type: "text" },
      { name: "retries", label: "Retries", type: "number" },
    ];
    const { thread, card } = await askInThread({ type: "form", question: "Database connection?", fields });
    expect(String(card.content)).toContain("Discord does not mask passwords");
    harness.discord.click(ALICE, card, componentWith(card, /:open$/).custom_id);
    const first = await harness.until("modal 1", () => harness.discord.modals.at(-1));
    expect(first.data.title).toBe("Fill in (1/2)");
    expect(first.data.components).toHaveLength(5);
    harness.discord.submitModal(ALICE, first, {
      "field:host": "db.internal",
      "field:port": "5432",
      "field:user": "app",
      "field:secret": "hunter2",
      "field:tls": ["yes"],
    });
    const notice = await harness.until("the Continue button", () =>
      harness.discord.ephemeralsFor(ALICE.id).find((message) => customIds(message).some((id) => id.endsWith(":part:1"))),
    );
    expect(componentWith(notice, /:part:1$/).label).toBe("Continue (2/2)");
    harness.discord.click(ALICE, notice, componentWith(notice, /:part:1$/).custom_id);
    const second = await harness.until("modal 2", () => harness.discord.modals.find((modal) => modal.data.title === "Fill in (2/2)"));
    harness.discord.submitModal(ALICE, second, { "field:region": "eu-west", "field:retries": "3" });
    expect(await modelReads(thread)).toEqual({
      ok: true,
      value: { host: "db.internal", port: 5432, user: "app", secret: "hunter2", tls: true, region: "eu-west", retries: 3 },
    });
    const line = settledLine(card);
    expect(line).toContain("Password: ••••");
    expect(line).not.toContain("hunter2");
  });
});

describe("a mention becomes a thread, a card, a tap and a final answer", () => {
  it("resumes the model with the tapped option and settles the card", async () => {
    harness.anthropic.script(
      ask({ type: "buttons", question: "Which environment?", options: ["staging", "production"] }),
      reply("Deploying to **production**."),
    );
    const thread = await harness.mention(ALICE, "deploy the app");
    const card = await harness.card(thread);
    expect(String(card.content)).toContain("Which environment?");
    expect(String(card.content)).toMatch(/<t:\d+:R>/);
    const production = componentWith(card, /:opt:1$/);
    expect(production.label).toBe("production");

    const tap = harness.discord.click(ALICE, card, production.custom_id);
    expect((await harness.discord.callbackOf(tap)).type).toBe(6);
    await harness.botSays(thread, /Deploying to \*\*production\*\*/);

    const results = lastToolResults(harness.anthropic.requests.at(-1));
    expect(JSON.parse(results[0]!.content)).toEqual({ ok: true, value: "production" });
    const settled = harness.discord.message(String(card.id))!;
    expect(settled.components).toEqual([]);
    expect(String(settled.content)).toContain(`✅ production — answered by <@${ALICE.id}>`);
    // Settled with the bot's own REST edit, which outlives the 15-minute interaction token, not the webhook.
    expect(harness.discord.calls.some((call) => call.method === "PATCH" && call.path === `/channels/${thread}/messages/${card.id}`)).toBe(
      true,
    );
    expect(harness.discord.calls.some((call) => call.path.startsWith("/webhooks/"))).toBe(false);

    // No step took a second, so no status line was shown, and none is left behind with a Stop button.
    const statuses = harness.discord.botMessagesIn(thread).filter((message) => /^(-# |⏳ )/.test(String(message.content)));
    expect(statuses).toEqual([]);
    expect(harness.discord.rejections).toEqual([]);
  });
});
