import { spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ALICE, SlackHarness, waitFor } from "../slack/slack-harness.js";
import { blockActions, CHANNEL } from "../slack/slack-payloads.js";
import { API_TOKENS, CI_SECRET } from "./api-client.js";

let harness: SlackHarness;

beforeEach(async () => {
  harness = await new SlackHarness({ apiTokens: API_TOKENS }).start();
});

afterEach(async () => {
  await harness.close();
});

describe("a Python caller with the standard library only", () => {
  it("posts GenericAgent's INTERRUPT payload, long-polls, and reads the tapped candidate", async () => {
    const child = spawn("python3", [join(import.meta.dirname, "python_client.py")], {
      env: { PATH: process.env.PATH ?? "", PARLEY_URL: harness.baseUrl, PARLEY_TOKEN: CI_SECRET, PARLEY_CHANNEL: `slack:${CHANNEL}` },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));

    await waitFor(() => output.includes("created"), "the Python client's ask");
    const askId = /created (\S+)/.exec(output)![1]!;
    let thread = "";
    await waitFor(() => {
      const call = harness.slack
        .callsOf("chat.postMessage")
        .find((entry) => JSON.stringify(entry.params.blocks ?? "").includes(`ask:${askId}:`));
      thread = String(call?.params.thread_ts ?? "");
      return call !== undefined;
    }, "the card");
    const card = harness.card(thread);
    const buttons = card.blocks.find((block) => block.type === "actions")!.elements as Array<{ text: { text: string }; action_id: string }>;
    const usEast = buttons.find((button) => button.text.text === "us-east")!;
    await harness.sender.interaction(
      blockActions({
        user: ALICE,
        actionId: usEast.action_id,
        channel: CHANNEL,
        cardTs: card.ts,
        threadTs: thread,
        responseUrl: harness.responseUrl,
      }),
    );
    expect(await exited).toBe(0);
    const result = JSON.parse(/result (.+)/.exec(output)![1]!) as Record<string, unknown>;
    expect(result).toMatchObject({
      id: askId,
      status: "answered",
      result: { ok: true, value: "us-east" },
      answered_by: `slack:${ALICE}`,
      metadata: { agent: "python" },
    });
  });
});
