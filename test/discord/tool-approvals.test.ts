import { afterEach, describe, expect, it } from "vitest";
import { McpToolProvider } from "../../adapters/mcp/mcp-tool-provider.js";
import { SILENT_LOGGER } from "../../src/ports/logger.js";
import { ToolRules } from "../../src/tools/tool-rules.js";
import { lastToolResults, reply, toolUse } from "../fakes/fake-anthropic.js";
import type { FakeUser } from "../fakes/fake-discord.js";
import { scratch, testServer, waitFor } from "../mcp/mcp-harness.js";
import { ADMIN, ALICE, BOB, componentWith, DiscordHarness } from "./discord-harness.js";

let harness: DiscordHarness;
let provider: McpToolProvider;
let files: ReturnType<typeof scratch>;

/** Real discord.js and the real engine, with the test MCP server as `srv`. */
async function open(): Promise<void> {
  files = scratch();
  provider = new McpToolProvider({ servers: { srv: testServer({ recordFile: files.recordFile }) }, logger: SILENT_LOGGER });
  await provider.start();
  harness = await new DiscordHarness({ toolProvider: provider, toolRules: new ToolRules([], undefined) }).start();
}

afterEach(async () => {
  await harness.close();
  await provider.close();
  files.remove();
});

const labels = (card: Record<string, unknown>) =>
  (card.components as Array<{ components: Array<{ label?: string }> }>).flatMap((row) =>
    row.components.map((component) => component.label),
  );

async function parley(user: FakeUser, text: string): Promise<string> {
  const interaction = harness.discord.command(user, text);
  const answer = await harness.until(`the reply to /parley ${text}`, () =>
    harness.discord.ephemerals.find((entry) => entry.interactionId === interaction),
  );
  return String(answer.message.content);
}

describe("approval cards on Discord", () => {
  it("Approve and Deny buttons; a stranger's tap changes nothing; Approve runs the tool once and settles the card", async () => {
    await open();
    harness.anthropic.script({ content: [toolUse("srv__delete_record", { id: "d1" })] }, reply("Deleted d1."));
    const thread = await harness.mention(ALICE, "delete d1");
    const card = await harness.card(thread);
    expect(labels(card).slice(0, 2)).toEqual(["Approve", "Deny"]);
    expect(labels(card)).not.toContain("Cancel");
    expect(String(card.content)).toContain('"id": "d1"');

    harness.discord.click(BOB, card, componentWith(card, /:opt:0$/).custom_id);
    await harness.until("the stranger's notice", () => harness.discord.ephemeralsFor(BOB.id)[0]);
    expect(files.recorded()).not.toContain("delete_record d1");

    harness.discord.click(ALICE, card, componentWith(card, /:opt:0$/).custom_id);
    await harness.botSays(thread, /Deleted d1\./);
    expect(files.recorded().filter((line) => line === "delete_record d1")).toHaveLength(1);
    expect(lastToolResults(harness.anthropic.requests.at(-1))[0]).toMatchObject({ content: [{ type: "text", text: "deleted d1" }] });
    expect(String(harness.discord.message(String(card.id))?.content)).toContain(`✅ Approved — by <@${ALICE.id}>`);
    expect(harness.discord.message(String(card.id))?.components).toEqual([]);
  });

  it("Deny: nothing runs and the model reads who denied it", async () => {
    await open();
    harness.anthropic.script({ content: [toolUse("srv__delete_record", { id: "d2" })] }, reply("Left alone."));
    const thread = await harness.mention(ALICE, "delete d2");
    const card = await harness.card(thread);
    harness.discord.click(ALICE, card, componentWith(card, /:opt:1$/).custom_id);
    await harness.botSays(thread, /Left alone\./);
    expect(files.recorded()).not.toContain("delete_record d2");
    expect(lastToolResults(harness.anthropic.requests.at(-1))[0]).toMatchObject({
      is_error: true,
      content: `denied by discord:${ALICE.id}: no reason given`,
    });
  });

  it("Deny with reason…: the form always denies, even with a reason of ok", async () => {
    await open();
    harness.anthropic.script({ content: [toolUse("srv__delete_record", { id: "d3" })] }, reply("Not deleted."));
    const thread = await harness.mention(ALICE, "delete d3");
    const card = await harness.card(thread);
    const interaction = harness.discord.click(ALICE, card, componentWith(card, /:open$/).custom_id);
    const modal = await harness.until("the Deny form", () => harness.discord.modals.find((entry) => entry.interactionId === interaction));
    harness.discord.submitModal(ALICE, modal, { answer: "ok" });
    await harness.botSays(thread, /Not deleted\./);
    expect(files.recorded()).not.toContain("delete_record d3");
    expect(lastToolResults(harness.anthropic.requests.at(-1))[0]).toMatchObject({
      is_error: true,
      content: `denied by discord:${ALICE.id}: ok`,
    });
  });

  it("/parley tools on Discord lists each tool with its policy, and an admin can change one", async () => {
    await open();
    await waitFor(() => provider.status().every((server) => server.state === "ready"));
    const listing = await parley(ADMIN, "tools");
    expect(listing).toContain("**MCP servers**");
    expect(listing).toContain("`srv__delete_record` ask (may change things) · srv");
    expect(await parley(ADMIN, "tools policy srv__* auto")).toContain("now **auto**");
    expect(await parley(ALICE, "tools policy srv__* auto")).toContain("Manage Server");
  });
});
