import type { types } from "@slack/bolt";
import { DENY_LABEL, DENY_REASON_FIELD } from "../../src/ask/approval.js";
import type { AskField, AskSpec } from "../../src/ask/spec.js";
import { modalQuestionBlocks } from "./render-card.js";
import { SLACK_LIMITS } from "./slack-limits.js";
import { escapeUntrusted, mrkdwnText, plainText, truncate } from "./slack-text.js";

type Block = types.KnownBlock;

export const ANSWER_MODAL_CALLBACK_ID = "parley-answer";
/** Block id of the single text box of an `input` ask. */
export const ANSWER_BLOCK_ID = "answer";
export const VALUE_ACTION_ID = "value";
const FIELD_BLOCK_PREFIX = "field-";
const MODAL_QUESTION_CHARS = 6000;
/** The core refuses a longer reason; the box stops there so nobody types one in vain. */
const DENY_REASON_MAX_CHARS = 1000;

export const PASSWORD_WARNING =
  "⚠️ Slack cannot hide what you type here: it stays visible on your screen until you submit. Parley never stores or shows it.";

export function fieldBlockId(fieldName: string): string {
  return `${FIELD_BLOCK_PREFIX}${fieldName}`;
}

/** The field name behind a block id, or undefined for blocks that are not form fields. */
export function fieldNameOf(blockId: string): string | undefined {
  return blockId.startsWith(FIELD_BLOCK_PREFIX) ? blockId.slice(FIELD_BLOCK_PREFIX.length) : undefined;
}

function fieldBlock(field: AskField): Block {
  const label = plainText(field.label, SLACK_LIMITS.inputLabelChars);
  const common = { type: "input" as const, block_id: fieldBlockId(field.name), label };
  switch (field.type) {
    case "text":
      return { ...common, optional: !field.required, element: { type: "plain_text_input", action_id: VALUE_ACTION_ID, max_length: 3000 } };
    case "password":
      return {
        ...common,
        optional: !field.required,
        hint: plainText(PASSWORD_WARNING, SLACK_LIMITS.inputHintChars),
        element: { type: "plain_text_input", action_id: VALUE_ACTION_ID, max_length: 3000 },
      };
    case "number":
      return {
        ...common,
        optional: !field.required,
        element: { type: "number_input", action_id: VALUE_ACTION_ID, is_decimal_allowed: true },
      };
    case "toggle":
      // A one-option checkbox: Slack has no switch element, and an unticked box must stay a valid answer.
      return {
        ...common,
        optional: true,
        element: {
          type: "checkboxes",
          action_id: VALUE_ACTION_ID,
          options: [{ text: plainText("Yes", SLACK_LIMITS.optionTextChars), value: "on" }],
        },
      };
  }
}

function inputBlock(spec: AskSpec): Block {
  const initial = typeof spec.default === "string" && spec.default.trim() !== "" ? truncate(spec.default, 3000) : undefined;
  return {
    type: "input",
    block_id: ANSWER_BLOCK_ID,
    label: plainText("Your answer", SLACK_LIMITS.inputLabelChars),
    element: {
      type: "plain_text_input",
      action_id: VALUE_ACTION_ID,
      multiline: true,
      max_length: 3000,
      ...(initial ? { initial_value: initial } : {}),
    },
  };
}

/** The modal behind "Answer" (input) and "Fill in" (form). `private_metadata` carries only the ask id. */
export function renderAnswerModal(askId: string, spec: AskSpec): types.ModalView {
  if (spec.type === "approval") return renderDenyModal(askId, spec);
  const fields = spec.type === "form" ? spec.fields.slice(0, SLACK_LIMITS.modalBlocks - 10).map(fieldBlock) : [inputBlock(spec)];
  const warning: Block[] = spec.fields.some((field) => field.type === "password")
    ? [{ type: "context", elements: [mrkdwnText(PASSWORD_WARNING)] }]
    : [];
  return {
    type: "modal",
    callback_id: ANSWER_MODAL_CALLBACK_ID,
    private_metadata: JSON.stringify({ askId }),
    title: plainText(spec.title ?? (spec.type === "form" ? "Fill in" : "Answer"), SLACK_LIMITS.modalTitleChars),
    submit: plainText("Submit", SLACK_LIMITS.modalButtonChars),
    close: plainText("Close", SLACK_LIMITS.modalButtonChars),
    blocks: [...modalQuestionBlocks(spec.question, MODAL_QUESTION_CHARS), ...warning, ...fields],
  };
}

/**
 * "Deny with reason…" on an approval card: one optional box, read back as the form field `reason`, which the core
 * always takes as a denial (a reason of "ok" must not approve); an empty box is a plain denial.
 */
export function renderDenyModal(askId: string, spec: AskSpec): types.ModalView {
  const tool = spec.approval?.tool ?? "this call";
  const label = spec.fields.find((field) => field.name === DENY_REASON_FIELD)?.label ?? "Reason (optional)";
  return {
    type: "modal",
    callback_id: ANSWER_MODAL_CALLBACK_ID,
    private_metadata: JSON.stringify({ askId }),
    title: plainText(`${DENY_LABEL} ${tool}`, SLACK_LIMITS.modalTitleChars),
    submit: plainText(DENY_LABEL, SLACK_LIMITS.modalButtonChars),
    close: plainText("Close", SLACK_LIMITS.modalButtonChars),
    blocks: [
      {
        type: "section",
        text: mrkdwnText(`The agent will not run \`${escapeUntrusted(tool)}\`. It is told who denied the call, and why if you say.`),
      },
      {
        type: "input",
        block_id: fieldBlockId(DENY_REASON_FIELD),
        optional: true,
        label: plainText(label, SLACK_LIMITS.inputLabelChars),
        element: { type: "plain_text_input", action_id: VALUE_ACTION_ID, multiline: true, max_length: DENY_REASON_MAX_CHARS },
      },
    ],
  };
}
