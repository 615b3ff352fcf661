import type { AnswerCheck, AnswerInput, AnswerValue } from "./answer.js";
import { argumentsHash } from "./canonical-json.js";
import { type AskSpec, clampTimeout } from "./spec.js";

/** The two buttons of every approval card, labelled exactly so (DESIGN §11); option 0 approves, 1 denies. */
export const APPROVE_LABEL = "Approve";
export const DENY_LABEL = "Deny";
export const DENY_REASON_FIELD = "reason";

/** A person's decision on one tool call, as stored on the approval ask. */
export type ApprovalDecision = { decision: "approve" } | { decision: "deny"; reason?: string };

const APPROVE_WORDS = new Set(["approve", "approved", "yes", "y", "1"]);
const DENY_WORDS = new Set(["deny", "denied", "no", "n", "2"]);
const MAX_REASON_CHARS = 1000;
/** Arguments shown on the card itself; longer ones are cut there and shown whole on request. */
export const CARD_ARGUMENT_CHARS = 1200;

/** The card asking a person to approve one exact tool call. */
export function approvalSpec(call: { tool: string; description: string; input: unknown; timeoutSeconds: number }): AskSpec {
  const description = call.description.trim().slice(0, 1000);
  const argumentsText = JSON.stringify(call.input ?? {}, null, 2);
  const shown =
    argumentsText.length > CARD_ARGUMENT_CHARS
      ? `${argumentsText.slice(0, CARD_ARGUMENT_CHARS)}\n… (${argumentsText.length - CARD_ARGUMENT_CHARS} more characters)`
      : argumentsText;
  return {
    type: "approval",
    dialect: "typed",
    title: `Approve ${call.tool}?`,
    question: `${description.length > 0 ? description : `The agent wants to run ${call.tool}.`}\n\n\`\`\`\n${shown}\n\`\`\``,
    options: [
      { value: "approve", label: APPROVE_LABEL },
      { value: "deny", label: DENY_LABEL },
    ],
    fields: [{ name: DENY_REASON_FIELD, label: "Reason (optional)", type: "text", required: false }],
    timeoutSeconds: clampTimeout(call.timeoutSeconds),
    allowOther: true,
    approval: { tool: call.tool, argumentsHash: argumentsHash(call.input), argumentsText },
  };
}

/**
 * Approve (option 0) or Deny (option 1) buttons. The Deny form (`form`, its one `reason` field) always denies,
 * whatever the reason says. A reply in the thread denies with its text as the reason (DESIGN §11), whatever it
 * says: a casual "ok" below a card must never run a tool. Only a button approves there.
 */
export function checkApproval(input: AnswerInput): AnswerCheck {
  if (input.kind === "option" && input.index === 0) return { ok: true, value: { decision: "approve" } };
  if (input.kind === "option" && input.index === 1) return { ok: true, value: { decision: "deny" } };
  if (input.kind === "form") return denial(String(input.values[DENY_REASON_FIELD] ?? "").trim());
  if (input.kind === "text") return denial(input.text.trim());
  return { ok: false, message: `Tap ${APPROVE_LABEL} or ${DENY_LABEL}.` };
}

/**
 * A typed decision where typing is the only way to decide (the terminal, `/parley answer`): "approve", "yes" or
 * "1" is the Approve button, "deny", "no" or "2" the Deny button; anything else is not a decision.
 */
export function typedDecision(text: string): AnswerInput | undefined {
  const folded = text.trim().toLowerCase();
  if (APPROVE_WORDS.has(folded)) return { kind: "option", index: 0 };
  if (DENY_WORDS.has(folded)) return { kind: "option", index: 1 };
  return undefined;
}

function denial(reason: string): AnswerCheck {
  if (reason.length > MAX_REASON_CHARS) return { ok: false, message: `Keep the reason under ${MAX_REASON_CHARS} characters.` };
  return { ok: true, value: reason === "" ? { decision: "deny" } : { decision: "deny", reason } };
}

/** Reads a stored answer value back as a decision; anything else is not a decision. */
export function readDecision(value: AnswerValue | null | undefined): ApprovalDecision | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  if (value.decision === "approve") return { decision: "approve" };
  if (value.decision !== "deny") return undefined;
  return typeof value.reason === "string" && value.reason.length > 0 ? { decision: "deny", reason: value.reason } : { decision: "deny" };
}

/** One line for the settled card. */
export function describeDecision(value: AnswerValue | null): string {
  const decision = readDecision(value);
  if (!decision) return "";
  if (decision.decision === "approve") return "Approved";
  return decision.reason ? `Denied: “${decision.reason}”` : "Denied";
}
