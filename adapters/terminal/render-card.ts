import type { CardView, Settlement } from "../../src/ports/platform-adapter.js";

/** Draws a card as plain text lines: a numbered list of choices and how to answer. */
export function renderCard(card: CardView, now: number): string {
  const { spec } = card;
  const lines = [`┌─ ${spec.title ?? "Question"} (${spec.type}) · expires ${describeDeadline(card.deadline - now)}`];
  for (const line of spec.question.split("\n")) lines.push(`│ ${line}`);
  // A terminal has room: arguments cut on the card are shown whole below it.
  if (spec.approval && !spec.question.includes(spec.approval.argumentsText)) {
    lines.push("│ All arguments:");
    for (const line of spec.approval.argumentsText.split("\n")) lines.push(`│   ${line}`);
  }
  for (const [index, option] of spec.options.entries()) lines.push(`│   ${index + 1}. ${option.label}`);
  lines.push(`│ ${howToAnswer(card)}`);
  lines.push(card.offersStop ? "└─ type cancel to cancel, or stop to end the turn" : "└─ type cancel to cancel");
  return lines.join("\n");
}

function howToAnswer(card: CardView): string {
  const { spec } = card;
  switch (spec.type) {
    case "confirm":
      return "Answer yes or no (1 = yes, 2 = no).";
    case "select":
    case "buttons":
      return spec.allowOther ? "Type a number, a label, or your own answer." : "Type a number or a label.";
    case "multiselect":
      return "Type numbers or labels separated by commas; an empty line picks none.";
    case "input":
      return typeof spec.default === "string" ? `Type your answer (empty line: “${spec.default}”).` : "Type your answer.";
    case "form":
      return "Fill in each field below.";
    case "message":
      return "Press Enter to continue.";
    case "approval":
      return "Type 1 to approve, 2 to deny, or a reason to deny with it.";
  }
}

export function renderFieldPrompt(card: CardView, fieldIndex: number): string {
  const field = card.spec.fields[fieldIndex];
  if (!field) return "";
  const kind =
    field.type === "toggle"
      ? "yes/no"
      : field.type === "password"
        ? "password, shown as you type: the terminal cannot mask it"
        : field.type;
  return `  ${field.label} (${kind}${field.required ? ", required" : ""}):`;
}

export function renderSettlement(settlement: Settlement): string {
  const by = settlement.by ? ` by ${settlement.by}${settlement.byAdmin ? " (admin)" : ""}` : "";
  if (settlement.stopped) return `⏹ Stopped${by}.`;
  if (settlement.status === "answered") return `✓ ${settlement.answerText?.trim() || "Answered"}${by}`;
  if (settlement.status === "cancelled") return `✗ Cancelled${by}.`;
  return "⌛ Expired: nobody answered in time.";
}

function describeDeadline(milliseconds: number): string {
  const minutes = Math.max(0, Math.round(milliseconds / 60000));
  if (minutes < 1) return "in under a minute";
  if (minutes < 120) return `in ${minutes} min`;
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `in ${hours} h` : `in ${Math.round(hours / 24)} days`;
}
