import { afterEach, describe, expect, it } from "vitest";
import { McpToolProvider } from "../../adapters/mcp/mcp-tool-provider.js";
import { SILENT_LOGGER } from "../../src/ports/logger.js";
import { parsePolicyRules } from "../../src/tools/tool-policy.js";
import { ToolRules } from "../../src/tools/tool-rules.js";
import { lastToolResults, reply, toolUse } from "../fakes/fake-anthropic.js";
import { FAKE_BOT_USER_ID, type RecordedSlackCall } from "../fakes/fake-slack-api.js";
import { scratch, testServer } from "../mcp/mcp-harness.js";
import { ALICE, actionIdsOf, BOB, SlackHarness, waitFor } from "./slack-harness.js";
import { blockActions, CHANNEL, messageEvent, nextTs, slashCommand, viewSubmission } from "./slack-payloads.js";

let harness: SlackHarness;
let provider: McpToolProvider;
let files: ReturnType<typeof scratch>;
let eventCounter = 0;
/** How far the engine's clock runs ahead of the real one; tests move it to expire approvals. */
let clockOffsetMs = 0;

/** Real Bolt and the real engine, with the test MCP server as `srv` (its destructive tool needs approval). */
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
  clockOffsetMs = 0;
  harness = await new SlackHarness({
    toolProvider: provider,
    toolRules: new ToolRules(rules.rules, undefined),
    adminUserIds: ["U_CAROL"],
    clock: () => Date.now() + clockOffsetMs,
  }).start();
}

afterEach(async () => {
  await harness.close();
  await provider.close();
  files.remove();
});

/** Mentions the bot in a new thread; waits for the turn to end unless `untilIdle` is false (a call still running). */
async function mention(text: string, untilIdle = true): Promise<string> {
  const ts = nextTs();
  const seen = harness.engineCalls.filter((call) => call.method === "handleMessage").length;
  await harness.sender.event(messageEvent("app_mention", { user: ALICE, text: `<@${FAKE_BOT_USER_ID}> ${text}`, ts }), {
    teamId: "T_PARLEY",
    eventId: `EvTool${++eventCounter}`,
  });
  if (untilIdle) await harness.settle("handleMessage", seen + 1);
  else await harness.calls("handleMessage", seen + 1);
  return ts;
}

/** The thread's status message (the one with a Stop button), once a running step shows it. */
async function statusMessage(thread: string): Promise<RecordedSlackCall> {
  const hasStop = (call: RecordedSlackCall) => actionIdsOf(call.params.blocks).some((id) => id.startsWith("stop:"));
  await waitFor(() => harness.posted(thread).some(hasStop), "the status message with its Stop button", 10_000);
  return harness.posted(thread).find(hasStop)!;
}

/** Every text Slack would render for the status message: its posting and each edit of it. */
function statusTexts(status: RecordedSlackCall): string[] {
  const calls = [status, ...harness.updatesOf(String(status.result.ts))];
  return calls.flatMap((call) => [String(call.params.text), JSON.stringify(call.params.blocks)]);
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

  it("nobody decides in time: the card says it expired, the tool never runs, and the model reads approval timed out", async () => {
    await open();
    harness.anthropic.script({ content: [toolUse("srv__delete_record", { id: "r3" })] }, reply("Nobody answered."));
    const thread = await mention("delete r3");
    const card = harness.card(thread);
    clockOffsetMs = 25 * 60 * 60 * 1000;
    expect(await harness.engine.sweep()).toBe(1);
    await waitFor(() => harness.anthropic.requests.length === 2, "the model's second request");
    await harness.engine.idle();
    expect(files.recorded()).not.toContain("delete_record r3");
    expect(lastToolResults(harness.anthropic.requests.at(-1))[0]).toMatchObject({ is_error: true, content: "approval timed out" });
    const settled = harness.updatesOf(card.ts).at(-1)!;
    expect(JSON.stringify(settled.params.blocks)).toContain("Expired: nobody approved it in time, so it did not run");
    expect(actionIdsIn(settled.params.blocks)).toEqual([]);
    // A tap on the expired card runs nothing either.
    await tap(thread, card.actionIds[0]!, card.ts);
    await harness.settle("answer", 1);
    expect(files.recorded()).not.toContain("delete_record r3");
  });

  it("Stop on the status message during a slow call cancels it on the server and ends the turn", async () => {
    await open("srv__slow=auto");
    harness.anthropic.script({ content: [toolUse("srv__slow", { seconds: 20 })] }, reply("never sent"));
    const thread = await mention("work slowly", false);
    const status = await statusMessage(thread);
    await waitFor(() => files.recorded().some((line) => line.startsWith("started")), "the server");
    const stopId = actionIdsOf(status.params.blocks).find((id) => id.startsWith("stop:"))!;
    await tap(thread, stopId, String(status.result.ts));
    expect((await harness.calls("stop", 1))[0]!.result).toBe("stopping");
    await harness.engine.idle();
    await waitFor(() => files.recorded().includes("slow cancelled"), "the server to hear the cancellation");
    expect(files.recorded()).not.toContain("slow finished");
    expect(harness.anthropic.requests).toHaveLength(1);
    expect(harness.posted(thread).at(-1)!.params.text).toBe("⏹ Stopped.");
    expect(actionIdsOf(harness.updatesOf(String(status.result.ts)).at(-1)!.params.blocks)).toEqual([]);
  });

  it("a server that crashes mid-call: the model gets an error result and the bot keeps serving", async () => {
    await open("srv__crash=auto");
    harness.anthropic.script({ content: [toolUse("srv__crash", {})] }, reply("The server fell over."), reply("Still here."));
    const thread = await mention("crash it");
    await waitFor(() => harness.anthropic.requests.length === 2, "the model's second request");
    expect(files.recorded()).toContain("crash");
    const [result] = lastToolResults(harness.anthropic.requests[1]);
    expect(result).toMatchObject({ is_error: true });
    expect(JSON.stringify(result?.content)).toContain("server srv stopped during the call to srv__crash");
    expect(harness.posted(thread).at(-1)!.params.text).toBe("The server fell over.");

    const next = await mention("are you there?");
    expect(harness.posted(next).at(-1)!.params.text).toBe("Still here.");
    expect(harness.anthropic.requests).toHaveLength(3);
  });

  it("a server's progress text is shown escaped on the status message: its pings ping nobody", async () => {
    await open("srv__slow=auto");
    const pings = "<!channel> <!here> @everyone <@U123>";
    harness.anthropic.script({ content: [toolUse("srv__slow", { seconds: 2.5, message: pings })] }, reply("Done working."));
    const thread = await mention("work and shout", false);
    const status = await statusMessage(thread);
    await waitFor(() => statusTexts(status).some((text) => text.includes("srv__slow")), "the server's progress on the status message");
    await harness.engine.idle();
    const shown = statusTexts(status).filter((text) => text.includes("srv__slow"));
    expect(shown.join("\n")).toContain("&lt;!channel&gt; &lt;!here&gt; @\u200beveryone &lt;@U123&gt;");
    // Nothing the bot sent to Slack, status or otherwise, carries a raw special mention or user mention.
    const everything = harness.slack.calls.filter((call) => call.method === "chat.postMessage" || call.method === "chat.update");
    for (const call of everything) expect(JSON.stringify(call.params)).not.toMatch(/<!(channel|here|everyone)|<@U123>/);
    expect(files.recorded()).toContain("slow finished");
  });
});

function actionIdsIn(blocks: unknown): string[] {
  return JSON.stringify(blocks).match(/"action_id":"[^"]+"/g) ?? [];
}
