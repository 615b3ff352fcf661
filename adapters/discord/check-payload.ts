import { ComponentType, TextInputStyle } from "discord.js";
import { DISCORD_LIMITS } from "./discord-limits.js";

/** The loose shape of a component as sent to Discord; checked field by field below. */
interface RawComponent {
  type: number;
  custom_id?: string;
  label?: string;
  description?: string;
  placeholder?: string;
  style?: number;
  value?: string;
  min_values?: number;
  max_values?: number;
  options?: Array<{ label: string; value: string; description?: string }>;
  components?: RawComponent[];
  component?: RawComponent;
}

/**
 * Checks what `@discordjs/builders` does not: more than 5 buttons in a row, a row mixing buttons and a select,
 * duplicate custom ids, too many rows. Returns every problem found; empty means Discord will accept it.
 */
export function checkMessagePayload(payload: { content?: string; components?: readonly unknown[] }): string[] {
  const problems: string[] = [];
  const content = payload.content ?? "";
  if (content.length > DISCORD_LIMITS.contentChars) problems.push(`content has ${content.length} chars`);
  const rows = (payload.components ?? []) as RawComponent[];
  if (rows.length > DISCORD_LIMITS.actionRows) problems.push(`${rows.length} action rows`);
  const ids = new Set<string>();
  for (const [rowIndex, row] of rows.entries()) {
    const where = `row ${rowIndex + 1}`;
    if (row.type !== ComponentType.ActionRow) {
      problems.push(`${where} is not an action row`);
      continue;
    }
    const children = row.components ?? [];
    const buttons = children.filter((child) => child.type === ComponentType.Button);
    const selects = children.filter((child) => child.type === ComponentType.StringSelect);
    if (children.length === 0) problems.push(`${where} is empty`);
    if (buttons.length > 0 && selects.length > 0) problems.push(`${where} mixes buttons and a select`);
    if (selects.length > 1) problems.push(`${where} has ${selects.length} selects`);
    if (buttons.length > DISCORD_LIMITS.buttonsPerRow) problems.push(`${where} has ${buttons.length} buttons`);
    if (buttons.length + selects.length !== children.length) problems.push(`${where} has an unsupported component`);
    for (const child of children) {
      checkCustomId(child, ids, problems);
      if (child.type === ComponentType.Button) checkText(child.label, DISCORD_LIMITS.buttonLabelChars, `button label`, problems, true);
      if (child.type === ComponentType.StringSelect) checkSelect(child, problems);
    }
  }
  return problems;
}

/** Checks a modal: title, at most 5 top-level components, labels, text inputs and selects. */
export function checkModalPayload(modal: { title: string; custom_id: string; components: readonly unknown[] }): string[] {
  const problems: string[] = [];
  checkText(modal.title, DISCORD_LIMITS.modalTitleChars, "modal title", problems, true);
  checkText(modal.custom_id, DISCORD_LIMITS.customIdChars, "modal custom_id", problems, true);
  const components = modal.components as RawComponent[];
  if (components.length === 0 || components.length > DISCORD_LIMITS.modalComponents) {
    problems.push(`modal has ${components.length} components`);
  }
  const ids = new Set<string>();
  for (const top of components) {
    if (top.type !== ComponentType.Label || !top.component) {
      problems.push(`modal component of type ${top.type} is not a label`);
      continue;
    }
    checkText(top.label, DISCORD_LIMITS.modalLabelChars, "modal label", problems, true);
    checkText(top.description, DISCORD_LIMITS.modalDescriptionChars, "modal description", problems, false);
    const child = top.component;
    checkCustomId(child, ids, problems);
    if (child.type === ComponentType.TextInput) {
      if (child.style !== TextInputStyle.Short && child.style !== TextInputStyle.Paragraph) problems.push("text input style");
      checkText(child.value, DISCORD_LIMITS.textInputChars, "text input value", problems, false);
      checkText(child.placeholder, DISCORD_LIMITS.textInputPlaceholderChars, "text input placeholder", problems, false);
    } else if (child.type === ComponentType.StringSelect) checkSelect(child, problems);
    else problems.push(`modal label holds component type ${child.type}`);
  }
  return problems;
}

function checkCustomId(component: RawComponent, ids: Set<string>, problems: string[]): void {
  const id = component.custom_id;
  if (id === undefined) {
    problems.push(`component of type ${component.type} has no custom_id`);
    return;
  }
  checkText(id, DISCORD_LIMITS.customIdChars, "custom_id", problems, true);
  if (ids.has(id)) problems.push(`duplicate custom_id ${id}`);
  ids.add(id);
}

function checkSelect(select: RawComponent, problems: string[]): void {
  const options = select.options ?? [];
  if (options.length === 0 || options.length > DISCORD_LIMITS.selectOptions) problems.push(`select has ${options.length} options`);
  const minimum = select.min_values ?? 1;
  const maximum = select.max_values ?? 1;
  if (minimum < 0 || maximum < 1 || minimum > maximum || maximum > options.length) {
    problems.push(`select min_values ${minimum} / max_values ${maximum} with ${options.length} options`);
  }
  checkText(select.placeholder, DISCORD_LIMITS.selectPlaceholderChars, "select placeholder", problems, false);
  const values = new Set<string>();
  for (const option of options) {
    checkText(option.label, DISCORD_LIMITS.selectOptionTextChars, "option label", problems, true);
    checkText(option.value, DISCORD_LIMITS.selectOptionTextChars, "option value", problems, true);
    checkText(option.description, DISCORD_LIMITS.selectOptionTextChars, "option description", problems, false);
    if (values.has(option.value)) problems.push(`duplicate option value ${option.value}`);
    values.add(option.value);
  }
}

function checkText(text: string | undefined, limit: number, what: string, problems: string[], required: boolean): void {
  if (text === undefined) {
    if (required) problems.push(`${what} is missing`);
    return;
  }
  if ((required && text.length === 0) || text.length > limit) problems.push(`${what} has ${text.length} chars (limit ${limit})`);
}
