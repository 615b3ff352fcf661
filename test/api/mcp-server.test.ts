import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ALICE, type PostedCard, SlackHarness, waitFor } from "../slack/slack-harness.js";
import { CHANNEL, tapCard } from "../slack/slack-payloads.js";
import { API_TOKENS, CI_SECRET } from "./api-client.js";

let harness: SlackHarness;
let client: Client;

beforeEach(async () => {
  harness = await new SlackHarness({ apiTokens: API_TOKENS, mcpProgressIntervalMs: 100 }).start();
  client = await connect(CI_SECRET);
});

afterEach(async () => {
  await client.close();
  await harness.close();
});

/** The official MCP client over Streamable HTTP, as Claude Code would connect with a bearer header. */
async function connect(secret: string): Promise<Client> {
  const connected = new Client({ name: "test-agent", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${harness.baseUrl}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${secret}` } },
  });
  await connected.connect(transport);
  return connected;
}

function textOf(result: unknown): unknown {
  const content = (result as { content: Array<{ type: string; text: string }> }).content;
  return JSON.parse(content[0]!.text);
}

async function newestCard(): Promise<{ thread: string; card: PostedCard }> {
  let found: { thread: string; card: PostedCard } | undefined;
  await waitFor(() => {
    const call = [...harness.slack.callsOf("chat.postMessage")]
      .reverse()
      .find((entry) => JSON.stringify(entry.params.blocks ?? "").includes('"ask:'));
    if (call) found = { thread: String(call.params.thread_ts), card: harness.card(String(call.params.thread_ts)) };
    return found !== undefined;
  }, "a card");
  return found!;
}

async function tapYes(): Promise<void> {
  const { thread, card } = await newestCard();
  await tapCard(harness.sender, { card, thread, user: ALICE, button: "Yes", responseUrl: harness.responseUrl });
}

const confirm = { channel: `slack:${CHANNEL}`, type: "confirm", question: "Merge PR #42?" };

describe("MCP server at /mcp, through the official MCP client", () => {
  it("lists ask_user, get_ask_result and cancel_ask", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(["ask_user", "get_ask_result", "cancel_ask"]);
    const askUser = tools[0]!;
    expect(askUser.inputSchema.required).toEqual(["question", "channel"]);
  });

  it("ask_user posts the card, waits, and returns the tapped answer", async () => {
    const call = client.callTool({ name: "ask_user", arguments: { ...confirm, wait_s: 30 } });
    await tapYes();
    expect(textOf(await call)).toEqual({ ok: true, value: true });
  });

  it("a client whose timeout is shorter than the wait keeps waiting on progress notifications and gets the answer", async () => {
    const progress: number[] = [];
    const call = client.callTool({ name: "ask_user", arguments: { ...confirm, wait_s: 30 } }, undefined, {
      timeout: 400,
      resetTimeoutOnProgress: true,
      onprogress: (notification) => progress.push(notification.progress),
    });
    await newestCard();
    // Wait well past the client's own timeout before anyone answers.
    await new Promise((resolve) => setTimeout(resolve, 1200));
    await tapYes();
    expect(textOf(await call)).toEqual({ ok: true, value: true });
    expect(progress.length).toBeGreaterThanOrEqual(5);
  });

  it("when wait_s passes first it returns pending with the ask id; get_ask_result reads the answer later", async () => {
    const first = textOf(await client.callTool({ name: "ask_user", arguments: { ...confirm, wait_s: 0.2 } })) as Record<string, unknown>;
    expect(first).toMatchObject({ ok: false, pending: true, ask_id: expect.any(String) });
    await tapYes();
    const later = await client.callTool({ name: "get_ask_result", arguments: { ask_id: first.ask_id, wait_s: 10 } });
    expect(textOf(later)).toEqual({ ok: true, value: true });
  });

  it("a client that hangs up loses nothing: the ask stays open and is read by id afterwards", async () => {
    const hangUp = new AbortController();
    const call = client.callTool({ name: "ask_user", arguments: { ...confirm, wait_s: 60 } }, undefined, { signal: hangUp.signal });
    const { card } = await newestCard();
    const askId = card.actionIds[0]!.split(":")[1]!;
    hangUp.abort();
    await expect(call).rejects.toThrow();
    const pending = await client.callTool({ name: "get_ask_result", arguments: { ask_id: askId } });
    expect(textOf(pending)).toEqual({ ok: false, pending: true, ask_id: askId });
    await tapYes();
    expect(textOf(await client.callTool({ name: "get_ask_result", arguments: { ask_id: askId, wait_s: 10 } }))).toEqual({
      ok: true,
      value: true,
    });
  });

  it("cancel_ask cancels; a bad spec is a tool error the agent can repair; another token cannot reach the ask", async () => {
    const pending = textOf(await client.callTool({ name: "ask_user", arguments: { ...confirm, wait_s: 0 } })) as { ask_id: string };
    const other = await connect("other-secret-0123456789abcdef");
    const foreign = await other.callTool({ name: "cancel_ask", arguments: { ask_id: pending.ask_id } });
    expect(foreign.isError).toBe(true);
    await other.close();
    expect(textOf(await client.callTool({ name: "cancel_ask", arguments: { ask_id: pending.ask_id } }))).toEqual({
      ok: false,
      cancelled: true,
    });
    const bad = await client.callTool({ name: "ask_user", arguments: { channel: `slack:${CHANNEL}`, type: "select", question: "Which?" } });
    expect(bad.isError).toBe(true);
    expect((bad.content as Array<{ text: string }>)[0]!.text).toContain('type "select" needs "options"');
  });

  it("refuses a client without a valid token", async () => {
    await expect(connect("wrong-secret-000000000000")).rejects.toThrow(/Authorization: Bearer/);
  });
});
