import { afterEach, describe, expect, it } from "vitest";
import { McpToolProvider } from "../../adapters/mcp/mcp-tool-provider.js";
import { SILENT_LOGGER } from "../../src/ports/logger.js";
import { parsePolicyRules } from "../../src/tools/tool-policy.js";
import { ToolRules } from "../../src/tools/tool-rules.js";
import { lastToolResults, reply, toolUse } from "../fakes/fake-anthropic.js";
import type { FakeUser } from "../fakes/fake-discord.js";
import { scratch, testServer, waitFor } from "../mcp/mcp-harness.js";
import { ADMIN, ALICE, BOB, componentWith, customIds, DiscordHarness } from "./discord-harness.js";

let harness: DiscordHarness;
let provider: McpToolProvider;
let files: ReturnType<typeof scratch>;

/** Real discord.js and the real engine, with the test MCP server as `srv` and a server that cannot start as `broken`. */
async function open(policy = ""): Promise<void> {
  files = scratch();
  provider = new McpToolProvider({
    servers: {
      srv: testServer({ recordFile: files.recordFile }),
      broken: { type: "stdio", command: "/nonexistent/mcp-server", args: [], env: {} },
    },
    logger: SILENT_LOGGER,
    restartBackoff: { initialDelayMs: 60_000, maxDelayMs: 60_000 },
  });
  await provider.start();
  const rules = parsePolicyRules(policy);
  if (!rules.ok) throw new Error(rules.error);
  harness = await new DiscordHarness({ toolProvider: provider, toolRules: new ToolRules(rules.rules, undefined) }).start();
}

/** The turn's status message (the one with a Stop button), once a running step shows it. */
async function statusMessage(thread: string): Promise<Record<string, unknown>> {
  return harness.until(
    "the status message",
    () => harness.discord.botMessagesIn(thread).find((message) => customIds(message).some((id) => id.startsWith("stop:"))),
    { quiet: false },
  );
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
    await waitFor(() => provider.status().find((server) => server.name === "srv")?.state === "ready");
    const listing = await parley(ADMIN, "tools");
    expect(listing).toContain("**MCP servers**");
    expect(listing).toContain("`srv__delete_record` ask (may change things) · srv");
    expect(await parley(ADMIN, "tools policy srv__* auto")).toContain("now **auto**");
    expect(await parley(ALICE, "tools policy srv__* auto")).toContain("Manage Server");
  });

  it("a double tap of Approve runs the tool once", async () => {
    await open();
    harness.anthropic.script({ content: [toolUse("srv__delete_record", { id: "d4" })] }, reply("Deleted d4."));
    const thread = await harness.mention(ALICE, "delete d4");
    const card = await harness.card(thread);
    const approve = componentWith(card, /:opt:0$/).custom_id;
    const taps = [harness.discord.click(ALICE, card, approve), harness.discord.click(ALICE, card, approve)];
    await Promise.all(taps.map((tap) => harness.discord.callbackOf(tap)));
    await harness.botSays(thread, /Deleted d4\./);
    await harness.quiet();
    expect(files.recorded().filter((line) => line === "delete_record d4")).toHaveLength(1);
    expect(harness.anthropic.requests).toHaveLength(2);
    expect(harness.discord.botMessagesIn(thread).filter((message) => /Deleted d4\./.test(String(message.content)))).toHaveLength(1);
  });

  it("a server that fails to start: the bot still serves, and /parley tools says why", async () => {
    await open();
    harness.anthropic.script(reply("Hello without broken."));
    const thread = await harness.mention(ALICE, "hello");
    await harness.botSays(thread, /Hello without broken\./);
    const offered = (harness.anthropic.requests[0]?.body.tools ?? []).map((tool) => tool.name);
    expect(offered).toContain("srv__lookup");
    expect(offered.some((name) => name.startsWith("broken__"))).toBe(false);
    expect(await parley(ADMIN, "tools")).toMatch(/`broken`: failed · .*ENOENT/);
  });

  it("nobody decides in time: the card says it expired, the tool never runs, and the model reads approval timed out", async () => {
    await open();
    harness.anthropic.script({ content: [toolUse("srv__delete_record", { id: "d5" })] }, reply("Nobody answered."));
    const thread = await harness.mention(ALICE, "delete d5");
    const card = await harness.card(thread);
    harness.now += 25 * 60 * 60 * 1000;
    expect(await harness.engine.sweep()).toBe(1);
    await harness.botSays(thread, /Nobody answered\./);
    expect(files.recorded()).not.toContain("delete_record d5");
    expect(lastToolResults(harness.anthropic.requests.at(-1))[0]).toMatchObject({ is_error: true, content: "approval timed out" });
    expect(String(harness.discord.message(String(card.id))?.content)).toContain(
      "⌛ Expired: nobody approved it in time, so it did not run",
    );
    expect(harness.discord.message(String(card.id))?.components).toEqual([]);
  });

  it("Stop on the status message during a slow call cancels it on the server and ends the turn", async () => {
    await open("srv__slow=auto");
    harness.anthropic.script({ content: [toolUse("srv__slow", { seconds: 20 })] }, reply("never sent"));
    const thread = await harness.mention(ALICE, "work slowly", { quiet: false });
    const status = await statusMessage(thread);
    harness.discord.click(ALICE, status, componentWith(status, /^stop:/).custom_id);
    await harness.botSays(thread, /⏹ Stopped\./);
    await waitFor(() => files.recorded().includes("slow cancelled"), 10_000, "the server to hear the cancellation");
    expect(files.recorded()).not.toContain("slow finished");
    expect(harness.anthropic.requests).toHaveLength(1);
    expect(harness.discord.message(String(status.id))?.components).toEqual([]);
  });

  it("a server that crashes mid-call: the model gets an error result and the bot keeps serving", async () => {
    await open("srv__crash=auto");
    harness.anthropic.script({ content: [toolUse("srv__crash", {})] }, reply("The server fell over."), reply("Still here."));
    const thread = await harness.mention(ALICE, "crash it");
    await harness.botSays(thread, /The server fell over\./);
    expect(files.recorded()).toContain("crash");
    const [result] = lastToolResults(harness.anthropic.requests[1]);
    expect(result).toMatchObject({ is_error: true });
    expect(JSON.stringify(result?.content)).toContain("server srv stopped during the call to srv__crash");

    const next = await harness.mention(ALICE, "are you there?");
    await harness.botSays(next, /Still here\./);
    expect(harness.anthropic.requests).toHaveLength(3);
  });

  it("a server's progress text on the status message pings nobody: allowed_mentions parses nothing", async () => {
    await open("srv__slow=auto");
    const pings = "<!channel> @everyone @here <@123456789012345678>";
    harness.anthropic.script({ content: [toolUse("srv__slow", { seconds: 2.5, message: pings })] }, reply("Done working."));
    const thread = await harness.mention(ALICE, "work and shout", { quiet: false });
    await harness.botSays(thread, /Done working\./);
    const progressBodies = harness.discord.calls
      .filter((call) => (call.method === "POST" || call.method === "PATCH") && call.path.includes(`/channels/${thread}/messages`))
      .map((call) => (call.body ?? {}) as { content?: string; allowed_mentions?: { parse?: string[]; users?: string[]; roles?: string[] } })
      .filter((body) => String(body.content).includes("srv__slow:"));
    expect(progressBodies.length).toBeGreaterThan(0);
    expect(
      progressBodies.some((body) => String(body.content).includes("@everyone") || String(body.content).includes("@\u200beveryone")),
    ).toBe(true);
    for (const body of progressBodies) {
      expect(body.allowed_mentions).toBeDefined();
      expect(body.allowed_mentions?.parse ?? []).toEqual([]);
      expect(body.allowed_mentions?.users ?? []).toEqual([]);
      expect(body.allowed_mentions?.roles ?? []).toEqual([]);
    }
  });
});
