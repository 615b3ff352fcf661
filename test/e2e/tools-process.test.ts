import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../chaos/bot-process.js";
import { FakeAnthropic, lastToolResults, type RecordedRequest, reply, toolUse } from "../fakes/fake-anthropic.js";
import { FAKE_DISCORD_TOKEN, FakeDiscord, type FakeUser } from "../fakes/fake-discord.js";
import { snowflake } from "../fakes/fake-discord-payloads.js";
import { FAKE_BOT_TOKEN, FAKE_BOT_USER_ID, FAKE_TEAM_ID, FakeSlackApi } from "../fakes/fake-slack-api.js";
import { FAKE_SIGNING_SECRET, SlackRequestSender } from "../fakes/fake-slack-signer.js";
import { TSX_LOADER_URL } from "../fakes/mcp-test-server-entry.js";
import { blockActions, CHANNEL, messageEvent, nextTs } from "../slack/slack-payloads.js";
import type { ToolsServerEvent } from "./tools-process-mcp-server.js";

/**
 * Issue 12, "Done when", from outside: the real `npm start` as a child process, with Slack (HTTP mode, signed
 * requests to PORT) and Discord (fake gateway and REST) at once, its tools from an mcp.json naming this folder's
 * MCP server, and the fake model. Only environment variables, HTTP and the fakes: nothing of src/ is imported.
 */

const MCP_SERVER_PATH = fileURLToPath(new URL("./tools-process-mcp-server.ts", import.meta.url));
/** How long the MCP server holds its tools/list answer: the window in which a hasty /readyz would be caught. */
const LIST_DELAY_MS = 300;
const WAIT_TIMEOUT_MS = 15_000;
/** Starting takes a few seconds alone (tsx compiles on the fly) and much longer on a busy machine. */
const START_TIMEOUT_MS = 60_000;
const TOOL = "ops__drop_table";

const SLACK_ALICE = "U_ALICE";
const DISCORD_ALICE: FakeUser = { id: snowflake(), username: "alice" };

let directory: string;
let recordFile: string;
let anthropic: FakeAnthropic;
let slack: FakeSlackApi;
let discord: FakeDiscord;
let bot: ChildProcess | undefined;
let port: number;
let sender: SlackRequestSender;
/** The first /readyz that answered 200, and what the MCP server had recorded by the time it arrived. */
let firstReady: { body: unknown; recordedByThen: ToolsServerEvent[] };

// ---- the process and its record -------------------------------------------------------------------------------

const logPath = () => join(directory, "bot.log");

/** The real bot as `npm start` runs it, with only these variables; its output goes to bot.log. */
function spawnBot(environment: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], { env: environment, stdio: ["ignore", "pipe", "pipe"] });
  const log = createWriteStream(logPath());
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  return child;
}

/** SIGTERM (the graceful shutdown closes the MCP server too), then SIGKILL if it is still running after 5 s. */
async function stopBot(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
  await exited;
  clearTimeout(timer);
}

/** Everything the MCP server recorded, oldest first. */
function recorded(): ToolsServerEvent[] {
  if (!existsSync(recordFile)) return [];
  const lines = readFileSync(recordFile, "utf8").split("\n").filter(Boolean);
  return lines.map((line) => JSON.parse(line) as ToolsServerEvent);
}

const callsRecorded = () => recorded().filter((event) => event.event === "call");

/** Polls until `probe` returns a value; on timeout the error carries the end of the bot's log. */
async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = WAIT_TIMEOUT_MS,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) {
      const log = existsSync(logPath()) ? readFileSync(logPath(), "utf8").slice(-3000) : "";
      throw new Error(`timed out waiting for ${what}\n--- bot log (end) ---\n${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Polls /readyz from the moment of spawn; resolves with the first 200 and the record as it was then. */
async function watchReadiness(child: ChildProcess): Promise<typeof firstReady> {
  return waitFor(
    "/readyz to answer 200",
    async () => {
      if (child.exitCode !== null) throw new Error(`the bot exited with ${child.exitCode}:\n${readFileSync(logPath(), "utf8")}`);
      try {
        const response = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(1000) });
        const body: unknown = await response.json();
        return response.status === 200 ? { body, recordedByThen: recorded() } : undefined;
      } catch {
        return undefined; // not listening yet
      }
    },
    START_TIMEOUT_MS,
  );
}

/** The model's requests from `index` on, once there are at least `count` of them. */
async function modelRequests(index: number, count: number): Promise<RecordedRequest[]> {
  return waitFor(`${count} model request(s)`, () => anthropic.requests.length >= index + count && anthropic.requests.slice(index));
}

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), "parley-tools-process-"));
  recordFile = join(directory, "record.jsonl");
  anthropic = await new FakeAnthropic().start();
  slack = await new FakeSlackApi().start();
  slack.addUser({ id: SLACK_ALICE, name: "alice" });
  discord = await new FakeDiscord().start();
  port = await freePort();
  sender = new SlackRequestSender(`http://127.0.0.1:${port}`);
  // The mcp.json a team would write, with this folder's server as "ops".
  const mcpConfig = {
    mcpServers: {
      ops: {
        command: process.execPath,
        args: ["--import", TSX_LOADER_URL, MCP_SERVER_PATH],
        env: { TOOLS_RECORD_FILE: recordFile, TOOLS_LIST_DELAY_MS: String(LIST_DELAY_MS) },
      },
    },
  };
  writeFileSync(join(directory, "mcp.json"), JSON.stringify(mcpConfig));
  bot = spawnBot({
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? directory,
    ANTHROPIC_BASE_URL: anthropic.url,
    ANTHROPIC_API_KEY: "sk-test",
    DATABASE_PATH: join(directory, "parley.db"),
    MCP_CONFIG: join(directory, "mcp.json"),
    SLACK_BOT_TOKEN: FAKE_BOT_TOKEN,
    SLACK_SIGNING_SECRET: FAKE_SIGNING_SECRET,
    SLACK_API_URL: slack.apiUrl,
    DISCORD_TOKEN: FAKE_DISCORD_TOKEN,
    DISCORD_APPLICATION_ID: discord.applicationId,
    DISCORD_API_URL: discord.url,
    PORT: String(port),
    HOST: "127.0.0.1",
    LOG_LEVEL: "warn",
  });
  firstReady = await watchReadiness(bot);
}, START_TIMEOUT_MS + 5000);

afterAll(async () => {
  await stopBot(bot);
  await discord?.close();
  await slack?.close();
  await anthropic?.close();
  rmSync(directory, { recursive: true, force: true });
});

// ---- Slack: a mention, the card, a tap ---------------------------------------------------------------------------

interface SlackCard {
  ts: string;
  text: string;
  buttons: Array<{ label: string; actionId: string }>;
}

let slackEventCounter = 0;

/** Mentions the bot in the channel (a signed Events API request to PORT); returns the thread's ts. */
async function slackMention(text: string): Promise<string> {
  const ts = nextTs();
  const event = messageEvent("app_mention", { user: SLACK_ALICE, text: `<@${FAKE_BOT_USER_ID}> ${text}`, ts });
  const response = await sender.event(event, { teamId: FAKE_TEAM_ID, eventId: `EvToolsProcess${++slackEventCounter}` });
  expect(response.status).toBe(200);
  return ts;
}

/** The card the bot posted in the thread: the message with an Approve button (the status message has Stop). */
function slackCard(thread: string): Promise<SlackCard> {
  return waitFor("the approval card on Slack", () => {
    for (const call of slack.callsOf("chat.postMessage")) {
      if (!call.ok || call.params.thread_ts !== thread) continue;
      const buttons = buttonsIn(call.params.blocks);
      if (buttons.some((button) => button.label === "Approve"))
        return { ts: String(call.result.ts), text: JSON.stringify(call.params.blocks), buttons };
    }
    return undefined;
  });
}

/** Every button of a message's actions blocks, in the order Slack shows them. */
function buttonsIn(blocks: unknown): SlackCard["buttons"] {
  const list = (Array.isArray(blocks) ? blocks : []) as Array<{
    type: string;
    elements?: Array<{ text?: { text: string }; action_id: string }>;
  }>;
  return list
    .filter((block) => block.type === "actions")
    .flatMap((block) => block.elements ?? [])
    .map((element) => ({ label: element.text?.text ?? "", actionId: element.action_id }));
}

/** Alice taps the button with this label (a signed block_actions request to PORT). */
async function slackTap(thread: string, card: SlackCard, label: string): Promise<void> {
  const button = card.buttons.find((entry) => entry.label === label);
  if (!button) throw new Error(`no ${label} button on the card`);
  const payload = blockActions({
    user: SLACK_ALICE,
    actionId: button.actionId,
    channel: CHANNEL,
    cardTs: card.ts,
    threadTs: thread,
    responseUrl: `${slack.url}/respond/tools-process`,
  });
  const response = await sender.interaction(payload);
  expect(response.status).toBe(200);
}

/** Waits until the bot has said something matching `pattern` in the Slack thread. */
function slackSays(thread: string, pattern: RegExp): Promise<true> {
  return waitFor(`the bot to say ${pattern} on Slack`, () =>
    slack.messages.some((message) => (message.threadTs ?? message.ts) === thread && pattern.test(message.text)),
  );
}

// ---- Discord: a mention, the card, a click -----------------------------------------------------------------------

type DiscordMessage = Record<string, unknown>;

function buttonsOf(message: DiscordMessage): Array<{ label: string; customId: string }> {
  const rows = (message.components ?? []) as Array<{ components?: Array<{ label?: string; custom_id?: string }> }>;
  return rows.flatMap((row) => row.components ?? []).map((button) => ({ label: button.label ?? "", customId: button.custom_id ?? "" }));
}

/** Mentions the bot in the channel through the gateway; returns the thread the bot opens on that message. */
async function discordMention(text: string): Promise<string> {
  const messageId = discord.say(DISCORD_ALICE, text, { mentionBot: true });
  return waitFor("the bot's thread on Discord", () => discord.threadIds().find((id) => id === messageId));
}

function discordCard(thread: string): Promise<DiscordMessage> {
  return waitFor("the approval card on Discord", () =>
    discord.botMessagesIn(thread).find((message) => buttonsOf(message).some((button) => button.label === "Approve")),
  );
}

/** Alice clicks the button with this label (an INTERACTION_CREATE on the gateway); waits for the bot's callback. */
async function discordClick(card: DiscordMessage, label: string): Promise<void> {
  const button = buttonsOf(card).find((entry) => entry.label === label);
  if (!button) throw new Error(`no ${label} button on the card`);
  await discord.callbackOf(discord.click(DISCORD_ALICE, card, button.customId));
}

function discordSays(thread: string, pattern: RegExp): Promise<true> {
  return waitFor(`the bot to say ${pattern} on Discord`, () =>
    discord.botMessagesIn(thread).some((message) => pattern.test(String(message.content))),
  );
}

// ---- the tests ---------------------------------------------------------------------------------------------------

describe("tools from MCP_CONFIG, with approvals, in the real bot process", () => {
  it("/readyz first answers 200 only after the MCP server has listed its tools, with both platforms connected", () => {
    expect(firstReady.body).toEqual({ ok: true, checks: { database: "ok", slack: "ok", discord: "ok" } });
    expect(firstReady.recordedByThen).toContainEqual({ event: "listed", tools: ["drop_table"] });
    expect(callsRecorded()).toEqual([]);
  });

  it("Slack: the card has Approve and Deny; Approve (tapped twice) runs the tool once with the approved arguments", async () => {
    const first = anthropic.requests.length;
    const input = { table: "orders", keep_backup: true, columns: ["id", "total"] };
    anthropic.script({ content: [toolUse(TOOL, input)] }, reply("Dropped the orders table."));
    const thread = await slackMention("drop the orders table");

    const card = await slackCard(thread);
    expect(card.buttons.slice(0, 2).map((button) => button.label)).toEqual(["Approve", "Deny"]);
    expect(card.text).toContain(TOOL);
    expect(card.text).toContain("orders");
    // The model was offered the server's tool under its exposed name, with the server's description and schema.
    const offered = (anthropic.requests[first]?.body.tools ?? []) as Array<{ name: string; description?: string; input_schema?: unknown }>;
    expect(offered.find((tool) => tool.name === TOOL)).toMatchObject({
      description: "Drops a table from the production database.",
      input_schema: { type: "object", required: expect.arrayContaining(["table", "keep_backup"]) },
    });
    expect(callsRecorded()).toEqual([]);

    // A double tap (or Slack's retry) must not run the tool twice.
    await Promise.all([slackTap(thread, card, "Approve"), slackTap(thread, card, "Approve")]);
    await slackSays(thread, /Dropped the orders table\./);
    expect(callsRecorded()).toEqual([{ event: "call", tool: "drop_table", arguments: input }]);
    const [, afterTool] = await modelRequests(first, 2);
    const [result] = lastToolResults(afterTool);
    expect(result).toMatchObject({ content: [{ type: "text", text: "dropped orders (backup kept)" }] });
    expect(result).not.toHaveProperty("is_error");
  });

  it("Slack: Deny never runs the tool and the model reads who denied it", async () => {
    const first = anthropic.requests.length;
    const before = callsRecorded().length;
    anthropic.script({ content: [toolUse(TOOL, { table: "customers", keep_backup: false })] }, reply("Left customers alone."));
    const thread = await slackMention("drop the customers table");
    const card = await slackCard(thread);
    expect(card.buttons.slice(0, 2).map((button) => button.label)).toEqual(["Approve", "Deny"]);

    await slackTap(thread, card, "Deny");
    await slackSays(thread, /Left customers alone\./);
    const [, afterDenial] = await modelRequests(first, 2);
    expect(lastToolResults(afterDenial)).toEqual([
      expect.objectContaining({ is_error: true, content: `denied by slack:${SLACK_ALICE}: no reason given` }),
    ]);
    expect(callsRecorded()).toHaveLength(before);
  });

  it("Discord: the card has Approve and Deny; Approve runs the tool once with the approved arguments", async () => {
    const first = anthropic.requests.length;
    const before = callsRecorded().length;
    const input = { table: "invoices", keep_backup: false, columns: ["number"] };
    anthropic.script({ content: [toolUse(TOOL, input)] }, reply("Dropped the invoices table."));
    const thread = await discordMention("drop the invoices table");

    const card = await discordCard(thread);
    expect(
      buttonsOf(card)
        .slice(0, 2)
        .map((button) => button.label),
    ).toEqual(["Approve", "Deny"]);
    expect(String(card.content)).toContain(TOOL);
    expect(String(card.content)).toContain("invoices");
    expect(callsRecorded()).toHaveLength(before);

    await discordClick(card, "Approve");
    await discordSays(thread, /Dropped the invoices table\./);
    expect(callsRecorded().slice(before)).toEqual([{ event: "call", tool: "drop_table", arguments: input }]);
    const [, afterTool] = await modelRequests(first, 2);
    const [result] = lastToolResults(afterTool);
    expect(result).toMatchObject({ content: [{ type: "text", text: "dropped invoices" }] });
    expect(result).not.toHaveProperty("is_error");
  });

  it("Discord: Deny never runs the tool and the model reads who denied it", async () => {
    const first = anthropic.requests.length;
    const before = callsRecorded().length;
    anthropic.script({ content: [toolUse(TOOL, { table: "payments", keep_backup: true })] }, reply("Left payments alone."));
    const thread = await discordMention("drop the payments table");
    const card = await discordCard(thread);

    await discordClick(card, "Deny");
    await discordSays(thread, /Left payments alone\./);
    const [, afterDenial] = await modelRequests(first, 2);
    expect(lastToolResults(afterDenial)).toEqual([
      expect.objectContaining({ is_error: true, content: `denied by discord:${DISCORD_ALICE.id}: no reason given` }),
    ]);
    expect(callsRecorded()).toHaveLength(before);
    // Nothing the model was scripted to do is left over: each session made exactly the two requests it was given.
    expect(anthropic.remaining).toBe(0);
  });
});
