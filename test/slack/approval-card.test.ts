import { afterEach, describe, expect, it } from "vitest";
import { actionIds, parseActionId } from "../../adapters/slack/action-ids.js";
import { parseBlockActions } from "../../adapters/slack/parse-interaction.js";
import { parseViewSubmission } from "../../adapters/slack/parse-view-submission.js";
import { codeSections, renderArgumentsModal } from "../../adapters/slack/render-arguments-modal.js";
import { renderCard } from "../../adapters/slack/render-card.js";
import { renderAnswerModal } from "../../adapters/slack/render-modal.js";
import { renderSettledCard, settlementLine } from "../../adapters/slack/render-settled.js";
import { approvalSpec, CARD_ARGUMENT_CHARS } from "../../src/ask/approval.js";
import { asAskId, asSessionId } from "../../src/ports/ids.js";
import type { CardView } from "../../src/ports/platform-adapter.js";
import { reply } from "../fakes/fake-anthropic.js";
import { FAKE_TEAM_ID } from "../fakes/fake-slack-api.js";
import { checkMessage, checkView } from "../fakes/fake-slack-limits.js";
import { DEADLINE } from "./card-view.js";
import { ALICE, actionIdsOf, BOB, SlackHarness, waitFor } from "./slack-harness.js";
import { blockActions, CHANNEL, nextTs, viewSubmission } from "./slack-payloads.js";

type Json = Record<string, unknown>;

/** The longest exposed tool name DESIGN §11 allows. */
const LONG_TOOL = `${"s".repeat(20)}__${"t".repeat(42)}`;

/** About 100 KB of pretty JSON: many short lines, one very long line, and text Slack would otherwise act on. */
function hugeInput(): Json {
  return {
    files: Array.from({ length: 900 }, (_, index) => ({ path: `/srv/docs/${index}.md`, mode: "overwrite" })),
    body: `${"y".repeat(30_000)} <!channel> <@U_ALICE> & \`\`\`done\`\`\` ${"z".repeat(5_000)}`,
  };
}

function approvalCard(input: unknown, tool = "files__write_file", overrides: Partial<CardView> = {}): CardView {
  return {
    askId: asAskId("ApprovalAsk_1"),
    sessionId: asSessionId("0b8e7a7e-8f0e-4a43-9a3f-3a8d1d8f0c11"),
    conversation: { platform: "slack", workspace: "T1", channel: "C1", thread: "1700000000.000100" },
    spec: approvalSpec({ tool, description: "Writes files on the server.", input, timeoutSeconds: 600 }),
    answerers: ["U_ALICE"],
    anyoneInThread: false,
    deadline: DEADLINE,
    cardRef: null,
    offersStop: true,
    ...overrides,
  };
}

function buttonsOf(blocks: unknown): Array<{ text: string; actionId: string; style?: string }> {
  return (blocks as Json[])
    .filter((block) => block.type === "actions")
    .flatMap((block) => block.elements as Json[])
    .map((element) => ({
      text: (element.text as { text: string }).text,
      actionId: String(element.action_id),
      ...(element.style ? { style: String(element.style) } : {}),
    }));
}

/** What a person reads in the modal's code sections, Slack's escaping undone. */
function decoded(sections: string[]): string[] {
  return sections.map((section) =>
    section
      .replace(/`\u200B/g, "`")
      .replace(/&lt;/g, "<")
      .replace(/&gt;/g, ">")
      .replace(/&amp;/g, "&"),
  );
}

function codeOfModal(view: Json): string[] {
  return (view.blocks as Json[])
    .filter((block) => block.type === "section" && String((block.text as Json).text).startsWith("```\n"))
    .map((block) => String((block.text as Json).text).slice(4, -4));
}

describe("the approval card on Slack", () => {
  it("tells people that a reply denies, never that typing approve approves (only the button runs a tool)", () => {
    const hint = JSON.stringify(renderCard(approvalCard({ path: "/srv/a.md" })).blocks.filter((block) => block.type === "context"));
    expect(hint).toContain("Or reply in this thread with your reason to deny.");
    expect(hint).not.toMatch(/approve/i);
  });

  it("offers Show all arguments only when the card had to cut them", () => {
    const short = renderCard(approvalCard({ path: "/srv/a.md" }));
    expect(buttonsOf(short.blocks).map((button) => button.text)).toEqual(["Approve", "Deny", "Deny with reason…", "Stop"]);
    const cut = renderCard(approvalCard(hugeInput()));
    expect(buttonsOf(cut.blocks)).toEqual([
      { text: "Approve", actionId: "ask:ApprovalAsk_1:opt:0", style: "primary" },
      { text: "Deny", actionId: "ask:ApprovalAsk_1:opt:1", style: "danger" },
      { text: "Deny with reason…", actionId: "ask:ApprovalAsk_1:open" },
      { text: "Show all arguments", actionId: "ask:ApprovalAsk_1:args" },
      { text: "Stop", actionId: expect.stringMatching(/^stop:/) },
    ]);
    // Exactly at the cut length nothing is hidden, so no button.
    const sized = (length: number) =>
      approvalSpec({ tool: "t", description: "", input: { a: "x".repeat(length - 13) }, timeoutSeconds: 60 });
    const exact = sized(CARD_ARGUMENT_CHARS);
    expect(exact.approval?.argumentsText.length).toBe(CARD_ARGUMENT_CHARS);
    // With Stop last.
    expect(buttonsOf(renderCard({ ...approvalCard({}), spec: exact }).blocks)).toHaveLength(4);
    expect(buttonsOf(renderCard({ ...approvalCard({}), spec: sized(CARD_ARGUMENT_CHARS + 1) }).blocks)).toHaveLength(5);
  });

  it("stays within Slack's limits with 100 KB of arguments and a 64-character tool name", () => {
    const card = approvalCard(hugeInput(), LONG_TOOL);
    expect(card.spec.approval!.argumentsText.length).toBeGreaterThan(100_000);
    const message = renderCard(card);
    expect(checkMessage(message)).toBeUndefined();
    expect(JSON.stringify(message.blocks)).toContain(LONG_TOOL);
    expect(JSON.stringify(message.blocks)).toMatch(/more characters\)/);
    // The model wrote the arguments: a <!channel> in them reaches Slack escaped.
    expect(JSON.stringify(message.blocks)).not.toContain("<!channel>");
  });

  it("the action id round-trips, and a tap needs a trigger to open the modal", () => {
    expect(actionIds.arguments("Ask_1-x")).toBe("ask:Ask_1-x:args");
    expect(parseActionId("ask:Ask_1-x:args")).toEqual({ kind: "arguments", askId: "Ask_1-x" });
    expect(parseActionId("ask:Ask_1-x:args:1")).toBeUndefined();
    expect(parseActionId("ask::args")).toBeUndefined();
    expect(parseActionId(`ask:${"a".repeat(101)}:args`)).toBeUndefined();
    const tap = blockActions({
      user: BOB,
      actionId: "ask:Ask_1:args",
      channel: CHANNEL,
      cardTs: "1.2",
      threadTs: "1.1",
      responseUrl: "https://x",
    });
    expect(parseBlockActions(tap)).toMatchObject({
      userId: BOB,
      teamId: FAKE_TEAM_ID,
      channel: CHANNEL,
      thread: "1.1",
      interaction: { kind: "arguments", askId: "Ask_1", triggerId: expect.stringMatching(/^trigger-/) },
    });
    expect(parseBlockActions({ ...tap, trigger_id: undefined })).toBeUndefined();
  });

  it("the arguments modal holds the whole JSON in code sections within Slack's limits", () => {
    const card = approvalCard(hugeInput(), LONG_TOOL);
    const text = card.spec.approval!.argumentsText;
    const view = renderArgumentsModal(LONG_TOOL, text) as unknown as Json;
    expect(checkView(view)).toBeUndefined();
    expect(view.submit).toBeUndefined();
    const blocks = view.blocks as Json[];
    expect(blocks.length).toBeLessThanOrEqual(100);
    const sections = codeOfModal(view);
    expect(sections.length).toBeGreaterThan(30);
    for (const section of sections) expect(`\`\`\`\n${section}\n\`\`\``.length).toBeLessThanOrEqual(3000);
    // No run of three backticks survives inside a block, and nothing Slack would act on.
    for (const section of sections) expect(section).not.toMatch(/```|<!channel>|<@U_ALICE>/);
    // Every character is there, in order; lines cut in two lose no character.
    expect(decoded(sections).join("").replace(/\n/g, "")).toBe(text.replace(/\n/g, ""));
    expect(JSON.stringify(blocks)).not.toMatch(/more characters do not fit/);
  });

  it("packs short lines exactly, line breaks kept", () => {
    const text = JSON.stringify({ items: Array.from({ length: 400 }, (_, index) => `item ${index}`) }, null, 2);
    const { sections, shownChars } = codeSections(text);
    expect(sections.length).toBeGreaterThan(1);
    expect(sections.join("\n")).toBe(text);
    expect(shownChars).toBe(text.length);
  });

  it("says how much was left out when even a hundred blocks cannot hold it", () => {
    const text = JSON.stringify({ data: Array.from({ length: 20_000 }, (_, index) => `row ${index} ${"q".repeat(20)}`) }, null, 2);
    const { sections, shownChars } = codeSections(text);
    expect(shownChars).toBeLessThan(text.length);
    expect(sections.join("\n")).toBe(text.slice(0, shownChars));
    const view = renderArgumentsModal("files__write_file", text) as unknown as Json;
    expect(checkView(view)).toBeUndefined();
    expect(Buffer.byteLength(JSON.stringify(view))).toBeLessThan(250_000);
    const last = JSON.stringify((view.blocks as Json[]).at(-1));
    expect(last).toContain(`${text.length - shownChars} more characters do not fit`);
  });

  it("Deny with reason… opens a Deny form with one optional reason box", () => {
    const card = approvalCard({ path: "/srv/a.md" }, LONG_TOOL);
    const view = renderAnswerModal(card.askId, card.spec) as unknown as Json;
    expect(checkView(view)).toBeUndefined();
    const title = (view.title as Json).text as string;
    expect(title.startsWith(`Deny ${"s".repeat(10)}`)).toBe(true);
    expect(Array.from(title).length).toBeLessThanOrEqual(24);
    expect((view.submit as Json).text).toBe("Deny");
    const inputs = (view.blocks as Json[]).filter((block) => block.type === "input");
    expect(inputs).toHaveLength(1);
    expect(inputs[0]).toMatchObject({
      optional: true,
      label: { text: "Reason (optional)" },
      element: { type: "plain_text_input", multiline: true },
    });
    const short = renderAnswerModal(card.askId, approvalCard({}).spec) as unknown as Json;
    expect((short.title as Json).text).toBe("Deny files__write_file");
  });

  it("a submitted reason is the form's reason field (the core always reads it as a denial); an empty box is a plain denial", () => {
    const view = renderAnswerModal("ApprovalAsk_1", approvalCard({}).spec) as unknown as Json;
    const blockId = String((view.blocks as Json[]).find((block) => block.type === "input")?.block_id);
    const submit = (value: string | null) =>
      parseViewSubmission(viewSubmission(ALICE, view, { [blockId]: { type: "plain_text_input", value } }));
    expect(submit("not on prod")).toMatchObject({ askId: "ApprovalAsk_1", input: { kind: "form", values: { reason: "not on prod" } } });
    expect(submit(null)).toMatchObject({ input: { kind: "form", values: {} } });
  });

  it("the settled card names the decision and who made it, with no controls", () => {
    const card = approvalCard(hugeInput());
    expect(settlementLine({ status: "answered", answerText: "Approved", by: "U1" }, "approval")).toBe("✅ Approved — by <@U1>");
    expect(settlementLine({ status: "answered", answerText: "Denied: “<!channel> no”", by: "U9", byAdmin: true }, "approval")).toBe(
      "🚫 Denied: “&lt;!channel&gt; no” — by an admin, <@U9>",
    );
    expect(settlementLine({ status: "answered", answerText: "Denied", by: "U1" }, "approval")).toBe("🚫 Denied — by <@U1>");
    expect(settlementLine({ status: "expired" }, "approval")).toMatch(/^⌛ Expired: .*did not run/);
    const settled = renderSettledCard(card, { status: "answered", answerText: "Denied: “too wide”", by: "U1" });
    expect(checkMessage(settled)).toBeUndefined();
    expect(actionIdsOf(settled.blocks)).toEqual([]);
    expect(JSON.stringify(settled.blocks)).toContain("🚫 Denied: “too wide” — by <@U1>");
  });
});

describe("the approval card through Bolt and the fake Slack API", () => {
  let harness: SlackHarness | undefined;
  afterEach(async () => {
    await harness?.close();
    harness = undefined;
  });

  /** An approval ask written straight to the store, then posted by the engine's recovery, as after a restart. */
  async function postedApproval(input: unknown, tool = LONG_TOOL) {
    harness = await new SlackHarness().start();
    const thread = nextTs();
    const now = Date.now();
    const conversation = { platform: "slack" as const, workspace: FAKE_TEAM_ID, channel: CHANNEL, thread };
    const session = await harness.store.createSession({ id: "sess-approval", conversation, ownerId: ALICE, now });
    await harness.store.startTurnOrQueue(session.id, { role: "user", content: [{ type: "text", text: "write it" }] }, now);
    await harness.store.commitStep(session.id, {
      messages: [{ role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: tool, input }] }],
      usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
      ask: {
        id: "ApprovalAsk_1",
        toolUseId: "toolu_1",
        spec: approvalSpec({ tool, description: "Writes files.", input, timeoutSeconds: 600 }),
        siblingResults: [],
        deadline: now + 600_000,
      },
      now,
    });
    await harness.engine.recover();
    await harness.engine.idle();
    return { thread, card: harness.card(thread), text: JSON.stringify(input, null, 2) };
  }

  const tap = (user: string, actionId: string, thread: string, cardTs: string) =>
    harness!.sender.interaction(
      blockActions({ user, actionId, channel: CHANNEL, cardTs, threadTs: thread, responseUrl: harness!.responseUrl }),
    );

  const views = () => harness!.slack.callsOf("views.open");

  it("anyone in the thread can read the whole arguments; the modal passes Slack's checks", async () => {
    const { thread, card, text } = await postedApproval(hugeInput());
    expect(card.actionIds).toContain("ask:ApprovalAsk_1:args");
    // Bob may not decide (Alice owns the session), but reading changes nothing.
    expect((await tap(BOB, "ask:ApprovalAsk_1:args", thread, card.ts)).status).toBe(200);
    await waitFor(() => views().length === 1, "the arguments modal");
    const call = views()[0]!;
    expect(call.ok).toBe(true);
    const view = call.params.view as Json;
    expect(decoded(codeOfModal(view)).join("").replace(/\n/g, "")).toBe(text.replace(/\n/g, ""));
    expect(harness!.ephemerals(BOB)).toEqual([]);
  });

  it("an ask that is no longer open shows no arguments, only a notice", async () => {
    const { thread, card } = await postedApproval(hugeInput());
    await tap(BOB, "ask:SomeOtherAsk:args", thread, card.ts);
    expect(await harness!.noticesTo(BOB, 1)).toEqual(["This question is no longer open."]);
    expect(views()).toEqual([]);
  });

  it("Deny with reason… opens the Deny form; submitting it denies and settles the card with who decided", async () => {
    const { thread, card } = await postedApproval({ path: "/srv/a.md" }, "files__write_file");
    expect(card.actionIds).not.toContain("ask:ApprovalAsk_1:args");
    harness!.anthropic.script(reply("Understood, I will not write it."));
    await tap(ALICE, "ask:ApprovalAsk_1:open", thread, card.ts);
    await waitFor(() => views().length === 1, "the deny modal");
    const view = views()[0]!.params.view as Json;
    expect(views()[0]!.ok).toBe(true);
    expect((view.title as Json).text).toBe("Deny files__write_file");
    const blockId = String((view.blocks as Json[]).find((block) => block.type === "input")?.block_id);
    const response = await harness!.sender.interaction(
      viewSubmission(ALICE, view, { [blockId]: { type: "plain_text_input", value: "not on prod" } }),
    );
    expect(response.status).toBe(200);
    await harness!.settle("answer", 1);
    await waitFor(() => harness!.updatesOf(card.ts).length > 0, "the settled card");
    const settled = harness!.updatesOf(card.ts).at(-1)!;
    expect(settled.ok).toBe(true);
    expect(actionIdsOf(settled.params.blocks)).toEqual([]);
    expect(JSON.stringify(settled.params.blocks)).toContain(`🚫 Denied: “not on prod” — by <@${ALICE}>`);
  });
});
