import { afterEach, describe, expect, it } from "vitest";
import { McpToolProvider } from "../../adapters/mcp/mcp-tool-provider.js";
import { SILENT_LOGGER } from "../../src/ports/logger.js";
import { ToolRules } from "../../src/tools/tool-rules.js";
import { lastToolResults, reply, toolUse } from "../fakes/fake-anthropic.js";
import { FAKE_BOT_USER_ID } from "../fakes/fake-slack-api.js";
import { scratch, testServer } from "../mcp/mcp-harness.js";
import { ALICE, BOB, SlackHarness, waitFor } from "./slack-harness.js";
import { blockActions, CHANNEL, messageEvent, nextTs, slashCommand, viewSubmission } from "./slack-payloads.js";

let harness: SlackHarness;
let provider: McpToolProvider;
let files: ReturnType<typeof scratch>;
let eventCounter = 0;

/** Real Bolt and the real engine, with the test MCP server as `srv` (its destructive tool needs approval). */
async function open(): Promise<void> {
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
  harness = await new SlackHarness({ toolProvider: provider, toolRules: new ToolRules([], undefined), adminUserIds: ["U_CAROL"] }).start();
}

afterEach(async () => {
  await harness.close();
  await provider.close();
  files.remove();
});

async function mention(text: string): Promise<string> {
  const ts = nextTs();
  const seen = harness.engineCalls.filter((call) => call.method === "handleMessage").length;
  await harness.sender.event(messageEvent("app_mention", { user: ALICE, text: `<@${FAKE_BOT_USER_ID}> ${text}`, ts }), {
    teamId: "T_PARLEY",
    eventId: `EvTool${++eventCounter}`,
  });
  await harness.settle("handleMessage", seen + 1);
  return ts;
}

function tap(thread: string, actionId: string, cardTs: string, user = ALICE) {
  return harness.sender.interaction(
    blockActions({ user, actionId, channel: CHANNEL, cardTs, threadTs: thread, responseUrl: harness.responseUrl }),
  );
}

describe("approval cards on Slack", () => {
  it("Approve and Deny buttons; a stranger's tap changes nothing; a double tap runs the tool once", async () => {
    await open();
    harness.anthropic.script({ content: [toolUse("srv__delete_record", { id: "r1" })] }, reply("Deleted r1."));
    const thread = await mention("delete r1");
    const card = harness.card(thread);
    const buttons = card.blocks.find((block) => block.type === "actions")!.elements as Array<{ text: { text: string }; action_id: string }>;
    expect(buttons.slice(0, 2).map((button) => button.text.text)).toEqual(["Approve", "Deny"]);
    expect(JSON.stringify(card.blocks)).toContain("srv__delete_record");
    expect(JSON.stringify(card.blocks)).toContain('\\"id\\": \\"r1\\"');

    await tap(thread, buttons[0]!.action_id, card.ts, BOB);
    expect(await harness.noticesTo(BOB, 1)).toEqual([`Only <@${ALICE}> or an admin can answer or stop this.`]);
    expect(files.recorded()).not.toContain("delete_record r1");

    await Promise.all([tap(thread, buttons[0]!.action_id, card.ts), tap(thread, buttons[0]!.action_id, card.ts)]);
    await harness.settle("answer", 3);
    await waitFor(() => harness.anthropic.requests.length === 2, "the model's second request");
    await harness.engine.idle();
    expect(files.recorded().filter((line) => line === "delete_record r1")).toHaveLength(1);
    expect(lastToolResults(harness.anthropic.requests.at(-1))[0]).toMatchObject({ content: [{ type: "text", text: "deleted r1" }] });
    const settled = harness.updatesOf(card.ts).at(-1)!;
    expect(JSON.stringify(settled.params.blocks)).toContain("Approved");
    expect(JSON.stringify(settled.params.blocks)).toContain(`<@${ALICE}>`);
    expect(actionIdsIn(settled.params.blocks)).toEqual([]);
  });

  it("Deny with reason…: a form whose text reaches the model as the reason (even a reason of ok), and nothing runs", async () => {
    await open();
    harness.anthropic.script({ content: [toolUse("srv__delete_record", { id: "r2" })] }, reply("I will not."));
    const thread = await mention("delete r2");
    const card = harness.card(thread);
    const reasonButton = card.actionIds.find((id) => id.startsWith("ask:") && id.endsWith(":open"));
    expect(reasonButton).toBeDefined();
    await tap(thread, reasonButton!, card.ts);
    await waitFor(() => harness.slack.callsOf("views.open").length === 1, "the reason form");
    const view = harness.slack.callsOf("views.open")[0]!.params.view as Record<string, unknown>;
    const blockId = String((view.blocks as Array<{ type: string; block_id?: string }>).find((block) => block.type === "input")?.block_id);
    await harness.sender.interaction(viewSubmission(ALICE, view, { [blockId]: { type: "plain_text_input", value: "ok" } }));
    await harness.settle("answer", 1);
    await waitFor(() => harness.anthropic.requests.length === 2, "the model's second request");
    expect(files.recorded()).not.toContain("delete_record r2");
    expect(lastToolResults(harness.anthropic.requests.at(-1))[0]).toMatchObject({
      is_error: true,
      content: `denied by slack:${ALICE}: ok`,
    });
  });

  it("/parley tools lists servers and policies, says why a server failed, and a policy change is stored", async () => {
    await open();
    const run = async (text: string) => {
      const before = harness.slack.responses.length;
      await harness.sender.command(slashCommand("U_CAROL", text, harness.responseUrl));
      await waitFor(() => harness.slack.responses.length > before, "the command's reply");
      return String((harness.slack.responses.at(-1)!.body as { text: string }).text);
    };
    const listing = await run("tools");
    expect(listing).toContain("`srv`: ready");
    expect(listing).toMatch(/`broken`: failed · .*ENOENT/);
    expect(listing).toContain("`srv__delete_record` ask (may change things) · srv");
    expect(listing).toContain("`srv__lookup` auto (read-only tool) · srv");
    expect(await run("tools policy srv__delete_* deny")).toContain("now *deny*");
    expect(await run("tools")).toContain("`srv__delete_record` deny (rule srv__delete_*=deny)");
    expect((await harness.store.loadSettings())["tool-policy"]).toBe("srv__delete_*=deny");
  });
});

function actionIdsIn(blocks: unknown): string[] {
  return JSON.stringify(blocks).match(/"action_id":"[^"]+"/g) ?? [];
}
