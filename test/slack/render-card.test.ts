import { describe, expect, it } from "vitest";
import { actionIds, parseActionId } from "../../adapters/slack/action-ids.js";
import { renderCard } from "../../adapters/slack/render-card.js";
import { PASSWORD_WARNING, renderAnswerModal } from "../../adapters/slack/render-modal.js";
import { renderProgress } from "../../adapters/slack/render-progress.js";
import { renderSettledCard, settlementLine } from "../../adapters/slack/render-settled.js";
import { asSessionId } from "../../src/ports/ids.js";
import type { CardView } from "../../src/ports/platform-adapter.js";
import { mention, rich } from "../../src/ports/rich-text.js";
import { checkMessage, checkView } from "../fakes/fake-slack-limits.js";
import { cardOf, DEADLINE } from "./card-view.js";
import { actionIdsOf } from "./slack-harness.js";

function controlTypes(card: CardView): string[] {
  return renderCard(card)
    .blocks.filter((block) => block.type === "actions")
    .flatMap((block) => ("elements" in block ? block.elements.map((element) => element.type) : []));
}

const letters = (count: number) => Array.from({ length: count }, (_, index) => `choice ${index + 1}`);

describe("renderCard", () => {
  it("degrades a choice from buttons to radio buttons to a static select as options grow", () => {
    expect(controlTypes(cardOf({ type: "select", question: "q", options: letters(5) }))).toEqual([
      ...Array(5).fill("button"),
      "button",
      "button",
    ]);
    expect(controlTypes(cardOf({ type: "buttons", question: "q", options: letters(6) }))).toEqual(["radio_buttons", "button", "button"]);
    expect(controlTypes(cardOf({ type: "select", question: "q", options: letters(10) }))).toEqual(["radio_buttons", "button", "button"]);
    expect(controlTypes(cardOf({ type: "select", question: "q", options: letters(11) }))).toEqual(["static_select", "button", "button"]);
    expect(controlTypes(cardOf({ type: "select", question: "q", options: letters(100) }))).toEqual(["static_select", "button", "button"]);
  });

  it("draws a multiselect as checkboxes up to ten options, then a multi-select, always with Done", () => {
    expect(controlTypes(cardOf({ type: "multiselect", question: "q", options: letters(10) }))).toEqual([
      "checkboxes",
      "button",
      "button",
      "button",
    ]);
    expect(controlTypes(cardOf({ type: "multiselect", question: "q", options: letters(11) }))).toEqual([
      "multi_static_select",
      "button",
      "button",
      "button",
    ]);
  });

  it("shows who may answer and when the ask expires, and always offers Cancel, then Stop for the turn that waits", () => {
    const owner = JSON.stringify(renderCard(cardOf({ type: "confirm", question: "Ship?" })).blocks);
    expect(owner).toContain("Only <@U_ALICE> or an admin can answer");
    expect(owner).toContain(`<!date^${DEADLINE / 1000}^{date_short_pretty} at {time}|2026-11-30 21:00 UTC>`);
    const anyone = JSON.stringify(
      renderCard(cardOf({ type: "confirm", question: "Ship?" }, { answerers: [], anyoneInThread: true })).blocks,
    );
    expect(anyone).toContain("Anyone in this thread can answer");
    for (const type of ["confirm", "input", "message"]) {
      const ids = actionIdsOf(renderCard(cardOf({ type, question: "q" })).blocks);
      expect(ids.slice(-2)).toEqual([actionIds.cancel("AskId_123"), actionIds.stop("0b8e7a7e-8f0e-4a43-9a3f-3a8d1d8f0c11")]);
      // An API ask has no turn to stop.
      expect(actionIdsOf(renderCard(cardOf({ type, question: "q" }, { offersStop: false })).blocks).at(-1)).toBe(
        actionIds.cancel("AskId_123"),
      );
    }
    // Stop ends the turn, not just the question, so Slack asks once more before it goes.
    const stop = renderCard(cardOf({ type: "confirm", question: "q" }))
      .blocks.flatMap((block) => (block.type === "actions" ? block.elements : []))
      .at(-1);
    expect(stop).toMatchObject({
      text: { text: "Stop" },
      confirm: { confirm: { text: "Stop" }, deny: { text: "Keep waiting" }, style: "danger" },
    });
  });

  it("truncates long option labels and titles, and escapes what would ping a channel", () => {
    const longLabel = "x".repeat(300);
    const card = renderCard(
      cardOf({ type: "buttons", title: "T".repeat(200), question: "<!channel> A & B", options: [longLabel, "short"] }),
    );
    const json = JSON.stringify(card.blocks);
    expect(json).toContain(`"${"x".repeat(74)}…"`);
    expect(json).toContain(`"${"T".repeat(149)}…"`);
    // The question is a markdown block: `&` stays as written, the mention reads as text and pings nobody.
    expect(json).toContain('{"type":"markdown","text":"@\u2060channel A & B"}');
    expect(json).not.toContain("<!channel>");
    expect(renderCard(cardOf({ type: "confirm", question: "<!channel> A & B" })).text).toBe("❓ &lt;!channel&gt; A &amp; B");
    expect(checkMessage(card)).toBeUndefined();
  });

  it("shows the question's Markdown as the model wrote it, in a markdown block, with a plain fallback", () => {
    const question =
      "***Really*** ship [v2 (beta)](https://e.example/a_(b))?\n\n| env | ok |\n|---|---|\n| prod | no |\n\n![graph](https://e.example/g.png)";
    const card = renderCard(cardOf({ type: "confirm", question }));
    expect(card.blocks.filter((block) => block.type === "markdown")).toEqual([{ type: "markdown", text: question }]);
    expect(card.blocks.some((block) => block.type === "section")).toBe(false);
    expect(card.text).toContain("***Really*** ship [v2 (beta)]");
    const settled = renderSettledCard(cardOf({ type: "confirm", question }), { status: "answered", answerText: "Yes", by: "U1" });
    expect(settled.blocks).toContainEqual({ type: "markdown", text: question });
  });

  it("keeps a long question whole on the card and cuts it on the settled card, closing a code fence the cut lands in", () => {
    const listing = Array.from({ length: 280 }, (_, index) => `line ${index} of the listing`).join("\n");
    const view = cardOf({ type: "confirm", question: `Deploy this?\n\n\`\`\`\n${listing}\n\`\`\`` });
    const whole = renderCard(view);
    expect(whole.blocks).toContainEqual({ type: "markdown", text: view.spec.question });
    expect(checkMessage(whole)).toBeUndefined();
    const settled = renderSettledCard(view, { status: "answered", answerText: "Yes", by: "U1" });
    const [block, ...others] = settled.blocks.filter((entry) => entry.type === "markdown") as Array<{ text: string }>;
    expect(others).toEqual([]);
    expect(block?.text.length).toBeLessThanOrEqual(2900);
    expect(block?.text).toContain("line 50 of the listing");
    expect(block?.text).not.toContain("line 279 of the listing");
    expect((block?.text.match(/```/g) ?? []).length % 2).toBe(0);
    expect(block?.text.endsWith("```\n\n_(shortened)_")).toBe(true);
  });

  it('offers "reply in the thread" only when free text is allowed', () => {
    const open = JSON.stringify(renderCard(cardOf({ type: "select", question: "q", options: ["a", "b"] })).blocks);
    const closed = JSON.stringify(renderCard(cardOf({ type: "select", question: "q", options: ["a", "b"], allow_other: false })).blocks);
    expect(open).toContain("Reply in this thread with your own answer");
    expect(closed).not.toContain("your own answer");
  });

  it("puts only the ask id and an option index in action ids", () => {
    const card = cardOf({ type: "buttons", question: "q", options: [{ value: "secret-value-1", label: "One" }, "two"] });
    const ids = actionIdsOf(renderCard(card).blocks);
    expect(ids.map(parseActionId)).toEqual([
      { kind: "option", askId: "AskId_123", index: 0 },
      { kind: "option", askId: "AskId_123", index: 1 },
      { kind: "cancel", askId: "AskId_123" },
      { kind: "stop", sessionId: "0b8e7a7e-8f0e-4a43-9a3f-3a8d1d8f0c11" },
    ]);
    expect(JSON.stringify(renderCard(card).blocks)).not.toContain("secret-value-1");
  });
});

describe("renderAnswerModal", () => {
  it("draws every form field type, warns that a password is not masked, and fits the title in 24 characters", () => {
    const fields = [
      { name: "host", type: "text", required: true },
      { name: "secret", label: "Secret", type: "password" },
      { name: "port", type: "number" },
      { name: "tls", label: "TLS", type: "toggle" },
    ];
    const view = renderAnswerModal(
      "AskId_123",
      cardOf({ type: "form", title: "Database connection settings", question: "q", fields }).spec,
    );
    expect(checkView(view)).toBeUndefined();
    expect(view.title.text).toHaveLength(24);
    expect(JSON.parse(view.private_metadata ?? "")).toEqual({ askId: "AskId_123" });
    const inputs = view.blocks.filter((block) => block.type === "input");
    expect(inputs.map((block) => ("element" in block ? block.element.type : ""))).toEqual([
      "plain_text_input",
      "plain_text_input",
      "number_input",
      "checkboxes",
    ]);
    expect(JSON.stringify(inputs[1])).toContain(PASSWORD_WARNING);
    expect(inputs.map((block) => ("optional" in block ? block.optional : undefined))).toEqual([false, true, true, true]);
  });

  it("shows the question as escaped mrkdwn, since Slack has no markdown block in modals", () => {
    const view = renderAnswerModal("AskId_123", cardOf({ type: "input", question: "**Name** for <!channel> & <@U_BOB>?" }).spec);
    expect(checkView(view)).toBeUndefined();
    expect(view.blocks.some((block) => block.type === "markdown")).toBe(false);
    expect(view.blocks[0]).toEqual({
      type: "section",
      text: { type: "mrkdwn", text: "**Name** for &lt;!channel&gt; &amp; &lt;@U_BOB&gt;?" },
    });
  });
});

describe("settling", () => {
  it("writes one line per outcome, naming who ended the ask", () => {
    expect(settlementLine({ status: "answered", answerText: "prod", by: "U1" })).toBe("✅ prod — answered by <@U1>");
    expect(settlementLine({ status: "answered", answerText: "prod", by: "U9", byAdmin: true })).toBe(
      "✅ prod — answered by an admin, <@U9>",
    );
    expect(settlementLine({ status: "cancelled", by: "U1" })).toBe("✖️ Cancelled by <@U1>");
    expect(settlementLine({ status: "cancelled", by: "U1", stopped: true })).toBe("⏹ Stopped by <@U1>");
    expect(settlementLine({ status: "expired" })).toBe("⌛ Expired: nobody answered in time");
  });

  it("removes every control", () => {
    const settled = renderSettledCard(cardOf({ type: "select", question: "q", options: letters(40) }), {
      status: "answered",
      answerText: "choice 3",
      by: "U1",
    });
    expect(actionIdsOf(settled.blocks)).toEqual([]);
    expect(checkMessage(settled)).toBeUndefined();
  });
});

describe("renderProgress", () => {
  const view = {
    turnKey: "s:1",
    sessionId: asSessionId("session-1"),
    conversation: cardOf({ question: "q" }).conversation,
    text: rich`Waiting for ${mention("U_ALICE")}`,
  };
  it("has a Stop button while the turn runs and none when it is over", () => {
    expect(actionIdsOf(renderProgress({ ...view, done: false }).blocks)).toEqual(["stop:session-1"]);
    const done = renderProgress({ ...view, done: true });
    expect(actionIdsOf(done.blocks)).toEqual([]);
    expect(done.text).toBe("Waiting for <@U_ALICE>");
  });
});
