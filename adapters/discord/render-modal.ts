import {
  type APIModalInteractionResponseCallbackData,
  LabelBuilder,
  ModalBuilder,
  StringSelectMenuBuilder,
  TextInputBuilder,
  TextInputStyle,
} from "discord.js";
import { DENY_LABEL, DENY_REASON_FIELD } from "../../src/ask/approval.js";
import type { AskField, AskSpec } from "../../src/ask/spec.js";
import type { AskId } from "../../src/ports/ids.js";
import { checkModalPayload } from "./check-payload.js";
import { modalId } from "./custom-id.js";
import { DISCORD_LIMITS, truncate } from "./discord-limits.js";

/** What a person typed so far, by field name: text for text fields, booleans for toggles. */
export type DraftValues = Record<string, string | boolean>;

export const ANSWER_INPUT_ID = "answer";
const FIELD_PREFIX = "field:";
const TOGGLE_YES = "yes";
const TOGGLE_NO = "no";
/** The core refuses a longer reason; the box stops there so nobody types one in vain. */
const DENY_REASON_MAX_CHARS = 1000;

/** A form's fields cut into modals of at most 5, since a modal holds 5 top-level components. */
export function formParts(spec: AskSpec): AskField[][] {
  const parts: AskField[][] = [];
  for (let start = 0; start < spec.fields.length; start += DISCORD_LIMITS.modalComponents) {
    parts.push(spec.fields.slice(start, start + DISCORD_LIMITS.modalComponents));
  }
  return parts;
}

export function fieldInputId(field: AskField): string {
  return `${FIELD_PREFIX}${field.name}`;
}

/** The modal behind "Answer" (an `input` ask) or "Other…" (free text on a choice), prefilled when given. */
export function renderTextModal(
  askId: AskId,
  spec: AskSpec,
  kind: "text" | "other",
  prefill?: string,
): APIModalInteractionResponseCallbackData {
  const initial = prefill ?? (kind === "text" && typeof spec.default === "string" ? spec.default : undefined);
  const input = new TextInputBuilder()
    .setCustomId(ANSWER_INPUT_ID)
    .setStyle(TextInputStyle.Paragraph)
    .setMaxLength(DISCORD_LIMITS.textInputChars)
    .setRequired(!(kind === "text" && typeof spec.default === "string"));
  if (initial) input.setValue(truncate(initial, DISCORD_LIMITS.textInputChars));
  const label = new LabelBuilder()
    .setLabel(kind === "other" ? "Your own answer" : "Your answer")
    .setDescription(truncate(spec.question, DISCORD_LIMITS.modalDescriptionChars))
    .setTextInputComponent(input);
  const modal = new ModalBuilder()
    .setCustomId(modalId({ kind, askId }))
    .setTitle(truncate(spec.title ?? "Answer", DISCORD_LIMITS.modalTitleChars))
    .addLabelComponents(label);
  return checked(modal.toJSON());
}

/**
 * "Deny with reason…" on an approval card: one optional box, submitted as a text answer like "Answer", so an
 * empty box is a plain denial. A reason typed before a refusal (too long) comes back prefilled.
 */
export function renderDenyModal(askId: AskId, spec: AskSpec, prefill?: string): APIModalInteractionResponseCallbackData {
  const tool = spec.approval?.tool ?? "this call";
  const input = new TextInputBuilder()
    .setCustomId(ANSWER_INPUT_ID)
    .setStyle(TextInputStyle.Paragraph)
    .setMaxLength(DENY_REASON_MAX_CHARS)
    .setRequired(false);
  if (prefill) input.setValue(truncate(prefill, DENY_REASON_MAX_CHARS));
  const label = new LabelBuilder()
    .setLabel(
      truncate(spec.fields.find((field) => field.name === DENY_REASON_FIELD)?.label ?? "Reason (optional)", DISCORD_LIMITS.modalLabelChars),
    )
    .setDescription("Leave it empty to deny without a reason. The agent is told who denied the call.")
    .setTextInputComponent(input);
  const modal = new ModalBuilder()
    .setCustomId(modalId({ kind: "text", askId }))
    .setTitle(truncate(`${DENY_LABEL} ${tool}`, DISCORD_LIMITS.modalTitleChars))
    .addLabelComponents(label);
  return checked(modal.toJSON());
}

/** One part of a form's modal chain; values typed earlier (after a "Fix") are prefilled, passwords excepted. */
export function renderFormModal(
  askId: AskId,
  spec: AskSpec,
  part: number,
  values: DraftValues = {},
): APIModalInteractionResponseCallbackData {
  const parts = formParts(spec);
  const fields = parts[part] ?? [];
  const suffix = parts.length > 1 ? ` (${part + 1}/${parts.length})` : "";
  const title = truncate(spec.title ?? "Fill in", DISCORD_LIMITS.modalTitleChars - suffix.length) + suffix;
  const modal = new ModalBuilder().setCustomId(modalId({ kind: "part", askId, part })).setTitle(title);
  modal.addLabelComponents(fields.map((field) => fieldLabel(field, values[field.name])));
  return checked(modal.toJSON());
}

function fieldLabel(field: AskField, value: string | boolean | undefined): LabelBuilder {
  const label = new LabelBuilder().setLabel(truncate(field.label, DISCORD_LIMITS.modalLabelChars));
  const description = fieldDescription(field);
  if (description) label.setDescription(truncate(description, DISCORD_LIMITS.modalDescriptionChars));
  if (field.type === "toggle") {
    // A Yes/No select rather than a Checkbox: a Checkbox cannot be required and needs newer clients.
    const select = new StringSelectMenuBuilder()
      .setCustomId(fieldInputId(field))
      .setMinValues(0)
      .setMaxValues(1)
      .setRequired(false)
      .addOptions(
        { label: "Yes", value: TOGGLE_YES, ...(value === true ? { default: true } : {}) },
        { label: "No", value: TOGGLE_NO, ...(value === false ? { default: true } : {}) },
      );
    return label.setStringSelectMenuComponent(select);
  }
  const input = new TextInputBuilder()
    .setCustomId(fieldInputId(field))
    .setStyle(TextInputStyle.Short)
    .setMaxLength(DISCORD_LIMITS.textInputChars)
    .setRequired(field.required);
  // A password is never sent back to Discord, even to prefill a fix: it would travel through one more payload.
  if (typeof value === "string" && value !== "" && field.type !== "password")
    input.setValue(truncate(value, DISCORD_LIMITS.textInputChars));
  if (field.type === "number") input.setPlaceholder("A number, e.g. 42");
  return label.setTextInputComponent(input);
}

function fieldDescription(field: AskField): string | undefined {
  const long = field.label.length > DISCORD_LIMITS.modalLabelChars ? field.label : undefined;
  if (field.type === "password") return "Visible as you type: Discord does not mask it.";
  return long;
}

/** Reads a submitted modal's components back into draft values by field name. */
export function readModalValues(components: Array<{ customId: string; value?: string | null; values?: readonly string[] }>): {
  text: string | undefined;
  values: DraftValues;
} {
  const entries: Array<[string, string | boolean]> = [];
  let text: string | undefined;
  for (const component of components) {
    if (component.customId === ANSWER_INPUT_ID) text = component.value ?? "";
    if (!component.customId.startsWith(FIELD_PREFIX)) continue;
    const name = component.customId.slice(FIELD_PREFIX.length);
    if (component.values !== undefined) {
      const choice = component.values[0];
      if (choice !== undefined) entries.push([name, choice === TOGGLE_YES]);
    } else entries.push([name, component.value ?? ""]);
  }
  // fromEntries defines own keys, so a field id `field:__proto__` stays data and never reaches the prototype.
  return { text, values: Object.fromEntries(entries) };
}

function checked(modal: APIModalInteractionResponseCallbackData): APIModalInteractionResponseCallbackData {
  const problems = checkModalPayload(modal);
  if (problems.length > 0) throw new Error(`modal breaks Discord limits: ${problems.join("; ")}`);
  return modal;
}
