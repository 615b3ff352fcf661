import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FAKE_BOT_TOKEN, FakeSlackApi } from "../fakes/fake-slack-api.js";

let slack: FakeSlackApi;

beforeEach(async () => {
  slack = await new FakeSlackApi().start();
});

afterEach(async () => {
  await slack.close();
});

async function post(method: string, params: Record<string, string>): Promise<Record<string, unknown>> {
  const response = await fetch(`${slack.apiUrl}${method}`, {
    method: "POST",
    headers: { authorization: `Bearer ${FAKE_BOT_TOKEN}`, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(params).toString(),
  });
  return (await response.json()) as Record<string, unknown>;
}

const section = (text: string) => ({ type: "section", text: { type: "mrkdwn", text } });

describe("the fake Slack API refuses what Slack refuses", () => {
  it("answers invalid_blocks for too many blocks, an over-long button or an empty text", async () => {
    const tooMany = Array.from({ length: 51 }, () => section("x"));
    const longButton = [
      { type: "actions", elements: [{ type: "button", action_id: "a", text: { type: "plain_text", text: "b".repeat(76) } }] },
    ];
    for (const blocks of [tooMany, longButton, [section("")]]) {
      expect(await post("chat.postMessage", { channel: "C1", text: "t", blocks: JSON.stringify(blocks) })).toMatchObject({
        ok: false,
        error: "invalid_blocks",
      });
    }
  });

  it("answers msg_blocks_too_long when the blocks hold too much text in all", async () => {
    const blocks = Array.from({ length: 5 }, () => section("y".repeat(2900)));
    expect(await post("chat.postMessage", { channel: "C1", text: "t", blocks: JSON.stringify(blocks) })).toMatchObject({
      ok: false,
      error: "msg_blocks_too_long",
    });
  });

  it("accepts a valid message, records it and refuses a reused trigger id", async () => {
    expect(await post("chat.postMessage", { channel: "C1", text: "t", blocks: JSON.stringify([section("fine")]) })).toMatchObject({
      ok: true,
    });
    const view = JSON.stringify({ type: "modal", title: { type: "plain_text", text: "Answer" }, blocks: [section("q")] });
    expect(await post("views.open", { trigger_id: "trigger-x", view })).toMatchObject({ ok: true });
    expect(await post("views.open", { trigger_id: "trigger-x", view })).toMatchObject({ ok: false, error: "exchanged_trigger_id" });
    expect(slack.callsOf("chat.postMessage")).toHaveLength(1);
  });
});
