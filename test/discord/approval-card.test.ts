import { afterEach, describe, expect, it } from "vitest";
import { checkMessagePayload } from "../../adapters/discord/check-payload.js";
import { componentId, parseComponentId } from "../../adapters/discord/custom-id.js";
import { renderArgumentsReply } from "../../adapters/discord/render-arguments.js";
import { renderCard, truncateClosingFence } from "../../adapters/discord/render-card.js";
import { renderDenyModal } from "../../adapters/discord/render-modal.js";
import { renderSettledCard, settlementLine } from "../../adapters/discord/render-settlement.js";
import { approvalSpec, CARD_ARGUMENT_CHARS } from "../../src/ask/approval.js";
import { asAskId, asSessionId } from "../../src/ports/ids.js";
import type { CardView } from "../../src/ports/platform-adapter.js";
import { reply } from "../fakes/fake-anthropic.js";
import { messageErrors, modalErrors } from "../fakes/fake-discord-limits.js";
import { DEADLINE } from "./card-fixtures.js";
import { ALICE, BOB, customIds, DiscordHarness } from "./discord-harness.js";

type Json = Record<string, unknown>;

/** The longest exposed tool name DESIGN §11 allows. */
const LONG_TOOL = `${"s".repeat(20)}__${"t".repeat(42)}`;
const ASK_ID = asAskId("ApprovalAsk_1");

/** About 100 KB of pretty JSON, with text Discord would otherwise act on. */
function hugeInput(): Json {
  return {
    files: Array.from({ length: 900 }, (_, index) => ({ path: `/srv/docs/${index}.md`, mode: "overwrite" })),
    body: `${"y".repeat(30_000)} @everyone <@123> \`\`\`done\`\`\` ${"z".repeat(5_000)}`,
  };
}

function approvalCard(input: unknown, tool = "files__write_file", description = "Writes files on the server."): CardView {
  return {
    askId: ASK_ID,
    sessionId: asSessionId("0b5e6c1e-8f7a-4a7e-9d57-5f1f2a3b4c5d"),
    conversation: { platform: "discord", workspace: "1", channel: "2", thread: "3" },
    spec: approvalSpec({ tool, description, input, timeoutSeconds: 600 }),
    answerers: ["111"],
    anyoneInThread: false,
    deadline: DEADLINE,
    cardRef: null,
    offersStop: true,
  };
}

function buttons(body: { components: unknown[] }): Array<{ label: string; custom_id: string; style: number }> {
  return (body.components as Array<{ components: Array<{ label: string; custom_id: string; style: number }> }>)
    .flatMap((row) => row.components)
    .map(({ label, custom_id, style }) => ({ label, custom_id, style }));
}

const fences = (text: string) => (text.match(/```/g) ?? []).length;

describe("the approval card on Discord", () => {
  it("tells people that a reply denies, never that typing approve approves (only the button runs a tool)", () => {
    const content = renderCard(approvalCard({ path: "/srv/a.md" })).content;
    expect(content).toContain("Or reply in this thread with your reason to deny.");
    expect(content.split("```").at(-1)).not.toMatch(/approve/i);
  });

  it("offers Show all arguments only when the card had to cut them, and never Cancel", () => {
    expect(buttons(renderCard(approvalCard({ path: "/srv/a.md" }))).map((button) => button.label)).toEqual([
      "Approve",
      "Deny",
      "Deny with reason…",
      "Stop",
    ]);
    expect(buttons(renderCard(approvalCard(hugeInput())))).toEqual([
      { label: "Approve", custom_id: `ask:${ASK_ID}:opt:0`, style: 3 },
      { label: "Deny", custom_id: `ask:${ASK_ID}:opt:1`, style: 4 },
      { label: "Deny with reason…", custom_id: `ask:${ASK_ID}:open`, style: 2 },
      { label: "Show all arguments", custom_id: `ask:${ASK_ID}:args`, style: 2 },
      { label: "Stop", custom_id: "stop:0b5e6c1e-8f7a-4a7e-9d57-5f1f2a3b4c5d", style: 2 },
    ]);
    const sized = (length: number) => ({
      ...approvalCard({}),
      spec: approvalSpec({ tool: "t", description: "", input: { a: "x".repeat(length - 13) }, timeoutSeconds: 60 }),
    });
    // With Stop last.
    expect(buttons(renderCard(sized(CARD_ARGUMENT_CHARS)))).toHaveLength(4);
    expect(buttons(renderCard(sized(CARD_ARGUMENT_CHARS + 1)))).toHaveLength(5);
  });

  it("stays within Discord's limits with 100 KB of arguments, a 64-character tool and a long description", () => {
    const card = approvalCard(hugeInput(), LONG_TOOL, "d".repeat(1000));
    expect(card.spec.approval!.argumentsText.length).toBeGreaterThan(100_000);
    const body = renderCard(card);
    expect(messageErrors(body as unknown as Json)).toEqual({});
    expect(checkMessagePayload(body)).toEqual([]);
    for (const id of customIds(body as unknown as Json)) expect(id.length).toBeLessThanOrEqual(100);
    // Cut to fit 2,000 characters, the arguments' code block is closed again so the footer is not code.
    expect(body.content.length).toBeLessThanOrEqual(2000);
    expect(fences(body.content) % 2).toBe(0);
    expect(body.content.split("```").at(-1)).toContain("-# ");
    expect(body.allowed_mentions.parse).toEqual([]);
  });

  it("closes a code block that a cut left open, and leaves other text alone", () => {
    const text = `Intro\n\`\`\`\n${"x".repeat(200)}\n\`\`\``;
    expect(truncateClosingFence(text, 1000)).toBe(text);
    const cut = truncateClosingFence(text, 100);
    expect(cut.length).toBeLessThanOrEqual(100);
    expect(cut.endsWith("…\n```")).toBe(true);
    expect(truncateClosingFence("plain ".repeat(50), 20)).toBe(`${"plain ".repeat(50).slice(0, 19)}…`);
  });

  it("the custom id round-trips within 100 characters", () => {
    const askId = asAskId("A".repeat(64));
    const id = componentId({ kind: "arguments", askId });
    expect(id).toBe(`ask:${askId}:args`);
    expect(id.length).toBeLessThanOrEqual(100);
    expect(parseComponentId(id)).toEqual({ kind: "arguments", askId });
    expect(parseComponentId(`ask:${askId}:args:1`)).toBeUndefined();
    expect(parseComponentId("ask::args")).toBeUndefined();
    expect(parseComponentId(`ask:${"A".repeat(65)}:args`)).toBeUndefined();
  });

  it("Deny with reason… is a Deny form with one optional reason box", () => {
    const modal = renderDenyModal(ASK_ID, approvalCard({}, LONG_TOOL).spec);
    expect(modalErrors(modal as unknown as Json)).toEqual({});
    expect(modal.title.startsWith(`Deny ${"s".repeat(20)}`)).toBe(true);
    expect(modal.title.length).toBeLessThanOrEqual(45);
    expect(modal.custom_id).toBe(`modal:${ASK_ID}:text`);
    expect(modal.components).toHaveLength(1);
    expect(modal.components[0]).toMatchObject({
      label: "Reason (optional)",
      component: { custom_id: "answer", style: 2, required: false, max_length: 1000 },
    });
    expect(renderDenyModal(ASK_ID, approvalCard({}).spec).title).toBe("Deny files__write_file");
    expect(renderDenyModal(ASK_ID, approvalCard({}).spec, "too wide").components[0]).toMatchObject({ component: { value: "too wide" } });
  });

  it("the arguments travel whole as arguments.json, or are refused in words when too large to attach", () => {
    const text = approvalCard(hugeInput(), LONG_TOOL).spec.approval!.argumentsText;
    const answer = renderArgumentsReply(LONG_TOOL, text);
    expect(answer.files).toHaveLength(1);
    expect(answer.files[0]!.name).toBe("arguments.json");
    expect(Buffer.from(answer.files[0]!.attachment as Buffer).toString("utf8")).toBe(text);
    expect(answer.content).toContain(LONG_TOOL);
    expect(answer.content.length).toBeLessThanOrEqual(2000);
    const refused = renderArgumentsReply(LONG_TOOL, text, 1000);
    expect(refused.files).toEqual([]);
    expect(refused.content).toContain(`${Buffer.byteLength(text)} bytes`);
  });

  it("the settled card names the decision and who made it, with no controls", () => {
    expect(settlementLine({ status: "answered", answerText: "Approved", by: "9" }, "approval")).toBe("✅ Approved — by <@9>");
    expect(settlementLine({ status: "answered", answerText: "Denied: “no”", by: "9", byAdmin: true }, "approval")).toBe(
      "🚫 Denied: “no” — by an admin, <@9>",
    );
    expect(settlementLine({ status: "expired" }, "approval")).toMatch(/^⌛ Expired: .*did not run/);
    const settled = renderSettledCard(approvalCard(hugeInput(), LONG_TOOL, "d".repeat(1000)), {
      status: "answered",
      answerText: "Approved",
      by: "9",
    });
    expect(settled.components).toEqual([]);
    expect(messageErrors(settled as unknown as Json)).toEqual({});
    expect(fences(settled.content) % 2).toBe(0);
    expect(settled.content.endsWith("✅ Approved — by <@9>")).toBe(true);
  });
});

describe("the approval card through discord.js and the fake Discord API", () => {
  let harness: DiscordHarness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  /** A thread with a session, then an approval ask written straight to the store and posted by the engine's recovery. */
  async function postedApproval(input: unknown, tool = LONG_TOOL) {
    harness = await new DiscordHarness().start();
    harness.anthropic.script(reply("Hello."));
    const thread = await harness.mention(ALICE, "write the file");
    const conversation = { platform: "discord" as const, workspace: harness.discord.guildId, channel: harness.discord.channelId, thread };
    const session = await harness.store.findSession(conversation);
    if (!session) throw new Error("no session in the thread");
    expect(await harness.store.startTurnOrQueue(session.id, { role: "user", content: [{ type: "text", text: "go" }] }, harness.now)).toBe(
      "started",
    );
    await harness.store.commitStep(session.id, {
      messages: [{ role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: tool, input }] }],
      usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
      ask: {
        id: ASK_ID,
        toolUseId: "toolu_1",
        spec: approvalSpec({ tool, description: "Writes files.", input, timeoutSeconds: 600 }),
        siblingResults: [],
        deadline: harness.now + 600_000,
      },
      now: harness.now,
    });
    await harness.engine.recover();
    return { thread, card: await harness.card(thread), text: JSON.stringify(input, null, 2) };
  }

  it("anyone in the thread gets the whole arguments privately as arguments.json", async () => {
    const { card, text } = await postedApproval(hugeInput());
    expect(customIds(card)).toContain(`ask:${ASK_ID}:args`);
    // Bob may not decide (Alice started the session), but reading changes nothing.
    const interaction = harness!.discord.click(BOB, card, `ask:${ASK_ID}:args`);
    expect((await harness!.discord.callbackOf(interaction)).type).toBe(5);
    const reply = await harness!.until("the arguments reply", () =>
      harness!.discord.ephemerals.find((entry) => entry.interactionId === interaction),
    );
    expect(reply.userId).toBe(BOB.id);
    expect(reply.files.map((file) => file.name)).toEqual(["arguments.json"]);
    expect(reply.files[0]!.data.toString("utf8")).toBe(text);
    expect(reply.message.attachments).toMatchObject([{ filename: "arguments.json", size: Buffer.byteLength(text) }]);
    expect(harness!.discord.rejections).toEqual([]);
    // The card is untouched and still open.
    expect(customIds(harness!.discord.message(String(card.id))!)).toContain(`ask:${ASK_ID}:opt:0`);
  });

  it("an ask that is no longer the open one shows no arguments, only a notice", async () => {
    const { card } = await postedApproval(hugeInput());
    const interaction = harness!.discord.click(BOB, card, "ask:SomeOtherAsk:args");
    const reply = await harness!.until("the notice", () =>
      harness!.discord.ephemerals.find((entry) => entry.interactionId === interaction),
    );
    expect(reply.message.content).toBe("This question is no longer open.");
    expect(reply.files).toEqual([]);
  });

  it("Deny with reason… opens the Deny form; submitting it denies and settles the card with who decided", async () => {
    const { thread, card } = await postedApproval({ path: "/srv/a.md" }, "files__write_file");
    expect(customIds(card)).not.toContain(`ask:${ASK_ID}:args`);
    harness!.anthropic.script(reply("Understood, I will not write it."));
    const interaction = harness!.discord.click(ALICE, card, `ask:${ASK_ID}:open`);
    expect((await harness!.discord.callbackOf(interaction)).type).toBe(9);
    const modal = harness!.discord.modals.find((entry) => entry.interactionId === interaction)!;
    expect(modal.data.title).toBe("Deny files__write_file");
    harness!.discord.submitModal(ALICE, modal, { answer: "not on prod" });
    await harness!.botSays(thread, /I will not write it/);
    const settled = harness!.discord.message(String(card.id))!;
    expect(settled.components).toEqual([]);
    expect(String(settled.content)).toContain(`🚫 Denied: “not on prod” — by <@${ALICE.id}>`);
    expect(harness!.discord.rejections).toEqual([]);
  });
});
