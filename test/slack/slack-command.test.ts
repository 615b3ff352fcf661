import { afterEach, describe, expect, it } from "vitest";
import { SLACK_ADMIN_REFUSAL } from "../../adapters/slack/slack-listeners.js";
import type { Actor } from "../../src/ports/conversation.js";
import { ALICE, CAROL_ADMIN, SlackHarness, waitFor } from "./slack-harness.js";
import { slashCommand } from "./slack-payloads.js";

let harness: SlackHarness;

afterEach(async () => {
  await harness.close();
});

async function runCommand(user: string, text: string): Promise<Record<string, unknown>> {
  const response = await harness.sender.command(slashCommand(user, text, harness.responseUrl));
  expect(response.status).toBe(200);
  await waitFor(() => harness.slack.responses.length > 0, "a reply on the response_url");
  return harness.slack.responses[0]!.body;
}

describe("/parley", () => {
  it("passes the text and the actor (admin flag from users.info) to the command handler and replies privately", async () => {
    const seen: Array<{ text: string; actor: Actor }> = [];
    harness = await new SlackHarness({
      onCommand: async (command) => {
        seen.push({ text: command.text, actor: command.actor });
        return { kind: "reply", text: [command.actor.isAdmin ? "2 sessions waiting" : "Only admins can do that."] };
      },
    }).start();
    expect(await runCommand(CAROL_ADMIN, "sessions pending")).toEqual({ response_type: "ephemeral", text: "2 sessions waiting" });
    expect(seen).toEqual([{ text: "sessions pending", actor: { id: CAROL_ADMIN, name: "carol", isAdmin: true } }]);
  });

  it("refuses a member who is not an admin in Slack's words, and audits it", async () => {
    harness = await new SlackHarness().start();
    expect(await runCommand(ALICE, "stats")).toEqual({ response_type: "ephemeral", text: SLACK_ADMIN_REFUSAL });
    const audit = harness.store.db.prepare("SELECT actor, action, outcome FROM audit").all();
    expect(audit).toEqual([{ actor: ALICE, action: "admin-refused", outcome: "refused" }]);
  });
});
