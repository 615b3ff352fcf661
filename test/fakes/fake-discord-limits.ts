/**
 * The fake Discord API's own reading of Discord's component limits (shared/reference/platforms.md §2.1–2.2),
 * written apart from the adapter's checker so that a mistake in one is caught by the other.
 * Returns error paths in the style of Discord's 50035 "Invalid Form Body" answer; empty means accepted.
 */
type Json = Record<string, unknown>;

const ACTION_ROW = 1;
const BUTTON = 2;
const STRING_SELECT = 3;
const TEXT_INPUT = 4;
const TEXT_DISPLAY = 10;
const LABEL = 18;

export function messageErrors(body: Json): Record<string, string> {
  const errors: Record<string, string> = {};
  const content = body.content;
  if (typeof content === "string" && content.length > 2000) errors.content = "BASE_TYPE_MAX_LENGTH: Must be 2000 or fewer in length.";
  if (typeof body.nonce === "string" && body.nonce.length > 25) errors.nonce = "BASE_TYPE_MAX_LENGTH: Must be 25 or fewer in length.";
  const components = body.components;
  if (components === undefined) return errors;
  if (!Array.isArray(components)) return { components: "must be an array" };
  if (components.length > 5) errors.components = "BASE_TYPE_MAX_LENGTH: Must be 5 or fewer in length.";
  const ids = new Set<string>();
  for (const [rowIndex, row] of (components as Json[]).entries()) {
    const at = `components.${rowIndex}`;
    if (row.type !== ACTION_ROW) {
      errors[at] = "UNION_TYPE_CHOICES: top-level component must be an action row";
      continue;
    }
    const children = (row.components ?? []) as Json[];
    const buttons = children.filter((child) => child.type === BUTTON).length;
    const selects = children.filter((child) => child.type === STRING_SELECT).length;
    if (children.length < 1) errors[`${at}.components`] = "BASE_TYPE_MIN_LENGTH: Must be 1 or more in length.";
    if (buttons > 5) errors[`${at}.components`] = "BASE_TYPE_MAX_LENGTH: Must be 5 or fewer in length.";
    if (selects > 0 && children.length > 1) errors[`${at}.components`] = "COMPONENT_LAYOUT_WIDTH_EXCEEDED";
    for (const [index, child] of children.entries()) childErrors(child, `${at}.components.${index}`, ids, errors, false);
  }
  return errors;
}

export function modalErrors(data: Json): Record<string, string> {
  const errors: Record<string, string> = {};
  text(data.title, 1, 45, "title", errors);
  text(data.custom_id, 1, 100, "custom_id", errors);
  const components = (data.components ?? []) as Json[];
  if (components.length < 1 || components.length > 5) errors.components = "BASE_TYPE_BAD_LENGTH: Must be between 1 and 5 in length.";
  const ids = new Set<string>();
  for (const [index, top] of components.entries()) {
    const at = `components.${index}`;
    if (top.type === TEXT_DISPLAY) continue;
    if (top.type === LABEL) {
      text(top.label, 1, 45, `${at}.label`, errors);
      if (top.description !== undefined) text(top.description, 0, 100, `${at}.description`, errors);
      const child = top.component as Json | undefined;
      if (!child) {
        errors[`${at}.component`] = "BASE_TYPE_REQUIRED";
        continue;
      }
      if (child.type !== TEXT_INPUT && child.type !== STRING_SELECT) errors[`${at}.component.type`] = "not allowed in a label";
      childErrors(child, `${at}.component`, ids, errors, true);
      continue;
    }
    if (top.type === ACTION_ROW) {
      const children = (top.components ?? []) as Json[];
      if (children.length !== 1 || children[0]?.type !== TEXT_INPUT) errors[at] = "a modal action row holds one text input";
      for (const [childIndex, child] of children.entries()) childErrors(child, `${at}.components.${childIndex}`, ids, errors, true);
      continue;
    }
    errors[`${at}.type`] = "UNION_TYPE_CHOICES";
  }
  return errors;
}

function childErrors(child: Json, at: string, ids: Set<string>, errors: Record<string, string>, inModal: boolean): void {
  if (child.type !== BUTTON || child.style !== 5) {
    text(child.custom_id, 1, 100, `${at}.custom_id`, errors);
    if (typeof child.custom_id === "string") {
      if (ids.has(child.custom_id)) errors[`${at}.custom_id`] = "COMPONENT_CUSTOM_ID_DUPLICATED";
      ids.add(child.custom_id);
    }
  }
  if (child.type === BUTTON) {
    if (inModal) errors[`${at}.type`] = "buttons are not allowed in modals";
    if (child.label !== undefined) text(child.label, 1, 80, `${at}.label`, errors);
    if (typeof child.style !== "number" || child.style < 1 || child.style > 6) errors[`${at}.style`] = "BASE_TYPE_CHOICES";
  } else if (child.type === STRING_SELECT) {
    const options = (child.options ?? []) as Json[];
    if (options.length < 1 || options.length > 25) errors[`${at}.options`] = "BASE_TYPE_BAD_LENGTH: Must be between 1 and 25 in length.";
    const minimum = (child.min_values as number | undefined) ?? 1;
    const maximum = (child.max_values as number | undefined) ?? 1;
    if (minimum < 0 || minimum > 25 || maximum < 1 || maximum > 25 || minimum > maximum || maximum > options.length) {
      errors[`${at}.max_values`] = "SELECT_COMPONENT_MAX_VALUES_EXCEEDED";
    }
    if (child.placeholder !== undefined) text(child.placeholder, 0, 150, `${at}.placeholder`, errors);
    const values = new Set<unknown>();
    for (const [index, option] of options.entries()) {
      text(option.label, 1, 100, `${at}.options.${index}.label`, errors);
      text(option.value, 1, 100, `${at}.options.${index}.value`, errors);
      if (option.description !== undefined) text(option.description, 0, 100, `${at}.options.${index}.description`, errors);
      if (values.has(option.value)) errors[`${at}.options.${index}.value`] = "SELECT_COMPONENT_OPTION_VALUE_DUPLICATED";
      values.add(option.value);
    }
  } else if (child.type === TEXT_INPUT) {
    if (!inModal) errors[`${at}.type`] = "text inputs are only allowed in modals";
    if (child.style !== 1 && child.style !== 2) errors[`${at}.style`] = "BASE_TYPE_CHOICES";
    if (child.value !== undefined) text(child.value, 0, 4000, `${at}.value`, errors);
    if (child.placeholder !== undefined) text(child.placeholder, 0, 100, `${at}.placeholder`, errors);
  } else errors[`${at}.type`] = `component type ${String(child.type)} is not allowed here`;
}

function text(value: unknown, minimum: number, maximum: number, at: string, errors: Record<string, string>): void {
  if (typeof value !== "string") {
    errors[at] = "BASE_TYPE_REQUIRED: This field is required";
    return;
  }
  if (value.length < minimum || value.length > maximum)
    errors[at] = `BASE_TYPE_BAD_LENGTH: Must be between ${minimum} and ${maximum} in length.`;
}
