/**
 * Block Kit limits as Slack enforces them (shared/reference/platforms.md §1.1), written independently of the
 * adapter's renderer so a renderer bug cannot hide behind its own constants. Returns Slack's error code.
 */
type Json = Record<string, unknown>;

const MESSAGE_BLOCK_TYPES = new Set(["section", "actions", "context", "header", "divider", "markdown", "image", "rich_text"]);
const ACTION_ELEMENTS = new Set([
  "button",
  "checkboxes",
  "radio_buttons",
  "static_select",
  "multi_static_select",
  "overflow",
  "datepicker",
]);
const INPUT_ELEMENTS = new Set(["plain_text_input", "number_input", "checkboxes", "radio_buttons", "static_select", "multi_static_select"]);
/** Slack answers `msg_blocks_too_long` at about this much block text in one message. */
export const MESSAGE_BLOCK_TEXT_LIMIT = 13_200;

class Invalid extends Error {}

function check(condition: boolean, reason: string): void {
  if (!condition) throw new Invalid(reason);
}

function length(text: string): number {
  return Array.from(text).length;
}

function textObject(value: unknown, max: number, plainOnly = false): void {
  const text = value as Json | undefined;
  check(typeof text === "object" && text !== null, "text object missing");
  check(text!.type === "plain_text" || (!plainOnly && text!.type === "mrkdwn"), `bad text type ${String(text!.type)}`);
  check(typeof text!.text === "string" && length(text!.text as string) >= 1, "text must not be empty");
  check(length(text!.text as string) <= max, `text longer than ${max}`);
}

function options(list: unknown, max: number): void {
  check(Array.isArray(list) && list.length >= 1 && list.length <= max, `between 1 and ${max} options`);
  for (const option of list as Json[]) {
    textObject(option.text, 75);
    check(typeof option.value === "string" && length(option.value) <= 75, "option value over 75");
  }
}

/** A confirmation dialog: title 100, text 300, confirm and deny 30 each, all plain text but the text. */
function confirmDialog(value: Json): void {
  textObject(value.title, 100, true);
  textObject(value.text, 300);
  textObject(value.confirm, 30, true);
  textObject(value.deny, 30, true);
  check(value.style === undefined || value.style === "primary" || value.style === "danger", "bad confirm style");
}

function element(value: Json, allowed: Set<string>): void {
  check(typeof value.type === "string" && allowed.has(value.type), `element ${String(value.type)} not allowed`);
  if (value.action_id !== undefined) check(typeof value.action_id === "string" && value.action_id.length <= 255, "action_id over 255");
  if (value.placeholder !== undefined) textObject(value.placeholder, 150, true);
  switch (value.type) {
    case "button":
      textObject(value.text, 75, true);
      check(value.value === undefined || (typeof value.value === "string" && value.value.length <= 2000), "button value over 2000");
      check(value.style === undefined || value.style === "primary" || value.style === "danger", "bad button style");
      if (value.confirm !== undefined) confirmDialog(value.confirm as Json);
      return;
    case "radio_buttons":
    case "checkboxes":
      options(value.options, 10);
      return;
    case "static_select":
    case "multi_static_select":
      options(value.options, 100);
      return;
    case "plain_text_input":
      check(value.max_length === undefined || (value.max_length as number) <= 3000, "max_length over 3000");
      check(value.initial_value === undefined || length(value.initial_value as string) <= 3000, "initial_value over 3000");
      return;
    case "number_input":
      check(typeof value.is_decimal_allowed === "boolean", "number_input needs is_decimal_allowed");
      return;
  }
}

function block(value: Json, inModal: boolean): void {
  if (value.block_id !== undefined) check(typeof value.block_id === "string" && value.block_id.length <= 255, "block_id over 255");
  switch (value.type) {
    case "section":
      if (value.text !== undefined) textObject(value.text, 3000);
      else check(Array.isArray(value.fields), "section needs text or fields");
      return;
    case "header":
      textObject(value.text, 150, true);
      return;
    case "context": {
      const elements = value.elements as Json[];
      check(Array.isArray(elements) && elements.length >= 1 && elements.length <= 10, "context takes 1 to 10 elements");
      for (const item of elements) textObject(item, 3000);
      return;
    }
    case "actions": {
      const elements = value.elements as Json[];
      check(Array.isArray(elements) && elements.length >= 1 && elements.length <= 25, "actions take 1 to 25 elements");
      const ids = elements.map((item) => item.action_id);
      check(new Set(ids).size === ids.length, "action_id repeated in one block");
      for (const item of elements) element(item, ACTION_ELEMENTS);
      return;
    }
    case "input":
      check(inModal, "input blocks belong in modals");
      textObject(value.label, 2000, true);
      if (value.hint !== undefined) textObject(value.hint, 2000, true);
      element(value.element as Json, INPUT_ELEMENTS);
      return;
    case "markdown":
      check(typeof value.text === "string" && length(value.text) <= 12000, "markdown over 12000");
      return;
    default:
      check(MESSAGE_BLOCK_TYPES.has(String(value.type)), `unknown block type ${String(value.type)}`);
  }
}

function blocks(list: unknown, max: number, inModal: boolean): void {
  check(Array.isArray(list), "blocks must be an array");
  const items = list as Json[];
  check(items.length <= max, `no more than ${max} blocks`);
  const ids = items.map((item) => item.block_id).filter((id) => id !== undefined);
  check(new Set(ids).size === ids.length, "block_id repeated");
  for (const item of items) block(item, inModal);
}

/** Sum of every `text` string in the blocks. */
export function blockText(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + blockText(item), 0);
  if (typeof value !== "object" || value === null) return 0;
  return Object.entries(value).reduce(
    (sum, [key, item]) => sum + (key === "text" && typeof item === "string" ? length(item) : blockText(item)),
    0,
  );
}

/** undefined when Slack would accept the message, else its error code and why. */
export function checkMessage(params: { text?: unknown; blocks?: unknown }): { error: string; reason: string } | undefined {
  try {
    if (params.blocks === undefined) check(typeof params.text === "string" && params.text.length > 0, "no_text");
    if (typeof params.text === "string" && length(params.text) > 40_000) return { error: "msg_too_long", reason: "text over 40000" };
    if (params.blocks !== undefined) {
      blocks(params.blocks, 50, false);
      if (blockText(params.blocks) > MESSAGE_BLOCK_TEXT_LIMIT) return { error: "msg_blocks_too_long", reason: "block text too long" };
    }
    return undefined;
  } catch (error) {
    if (error instanceof Invalid) return { error: error.message === "no_text" ? "no_text" : "invalid_blocks", reason: error.message };
    throw error;
  }
}

export function checkView(view: unknown): { error: string; reason: string } | undefined {
  try {
    const value = view as Json;
    check(typeof value === "object" && value !== null && value.type === "modal", "view must be a modal");
    textObject(value.title, 24, true);
    if (value.submit !== undefined) textObject(value.submit, 24, true);
    if (value.close !== undefined) textObject(value.close, 24, true);
    check(value.private_metadata === undefined || (value.private_metadata as string).length <= 3000, "private_metadata over 3000");
    blocks(value.blocks, 100, true);
    const hasInput = (value.blocks as Json[]).some((item) => item.type === "input");
    check(!hasInput || value.submit !== undefined, "a modal with inputs needs submit");
    return undefined;
  } catch (error) {
    if (error instanceof Invalid) return { error: "invalid_arguments", reason: error.message };
    throw error;
  }
}
