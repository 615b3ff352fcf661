import { checkApproval } from "./approval.js";
import type { AskSpec } from "./spec.js";

/** What a person did, as the platform saw it, before it is checked against the spec. */
export type AnswerInput =
  | { kind: "option"; index: number }
  | { kind: "options"; indexes: number[] }
  | { kind: "text"; text: string }
  | { kind: "form"; values: Record<string, string | boolean | undefined> }
  | { kind: "acknowledge" };

export type AnswerValue = string | boolean | string[] | Record<string, string | number | boolean>;

export type AnswerCheck =
  | { ok: true; value: AnswerValue; other?: true }
  | { ok: false; message: string; fieldErrors?: Record<string, string> };

const YES = new Set(["yes", "y", "true", "ok", "confirm", "sure", "approve", "👍"]);
const NO = new Set(["no", "n", "false", "deny", "reject", "👎"]);
export const MAX_TEXT_ANSWER_CHARS = 4000;

/** Reads a typed reply (thread message, terminal line) as the answer it most plausibly is. */
export function answerFromText(spec: AskSpec, text: string): AnswerInput {
  const trimmed = text.trim();
  const folded = trimmed.toLowerCase();
  if (spec.type === "message") return { kind: "acknowledge" };
  if (spec.type === "approval") return { kind: "text", text };
  if (spec.type === "select" || spec.type === "buttons") {
    const index = findOption(spec, folded);
    if (index !== undefined) return { kind: "option", index };
  }
  if (spec.type === "multiselect") {
    const parts = folded
      .split(",")
      .map((part) => part.trim())
      .filter((part) => part.length > 0);
    const indexes = parts.map((part) => findOption(spec, part));
    if (indexes.every((index) => index !== undefined)) return { kind: "options", indexes: indexes as number[] };
  }
  if (spec.type === "confirm") {
    if (folded === "1") return { kind: "option", index: 0 };
    if (folded === "2") return { kind: "option", index: 1 };
  }
  return { kind: "text", text };
}

function findOption(spec: AskSpec, folded: string): number | undefined {
  const byText = spec.options.findIndex((option) => option.label.toLowerCase() === folded || option.value.toLowerCase() === folded);
  if (byText >= 0) return byText;
  if (/^\d{1,3}$/.test(folded)) {
    const index = Number(folded) - 1;
    if (index >= 0 && index < spec.options.length) return index;
  }
  return undefined;
}

/** Checks an answer against its spec and returns the value the model will read. */
export function checkAnswer(spec: AskSpec, input: AnswerInput): AnswerCheck {
  switch (spec.type) {
    case "message":
      return { ok: true, value: "acknowledged" };
    case "confirm":
      return checkConfirm(input);
    case "select":
    case "buttons":
      return checkChoice(spec, input);
    case "multiselect":
      return checkMultiselect(spec, input);
    case "input":
      return checkInput(spec, input);
    case "form":
      return checkForm(spec, input);
    case "approval":
      return checkApproval(input);
  }
}

function checkConfirm(input: AnswerInput): AnswerCheck {
  if (input.kind === "option" && (input.index === 0 || input.index === 1)) return { ok: true, value: input.index === 0 };
  if (input.kind === "text") {
    const folded = input.text.trim().toLowerCase();
    if (YES.has(folded)) return { ok: true, value: true };
    if (NO.has(folded)) return { ok: true, value: false };
  }
  return invalid("Answer yes or no.");
}

function checkChoice(spec: AskSpec, input: AnswerInput): AnswerCheck {
  if (input.kind === "option") {
    const option = spec.options[input.index];
    return option ? { ok: true, value: option.value } : invalid("That option does not exist.");
  }
  if (input.kind === "text") {
    const text = input.text.trim();
    const index = findOption(spec, text.toLowerCase());
    if (index !== undefined) return checkChoice(spec, { kind: "option", index });
    if (!spec.allowOther) return invalid(`Pick one of: ${listOptions(spec)}.`);
    if (text.length === 0) return invalid("The answer is empty.");
    if (text.length > MAX_TEXT_ANSWER_CHARS) return invalid(`Keep the answer under ${MAX_TEXT_ANSWER_CHARS} characters.`);
    return { ok: true, value: text, other: true };
  }
  return invalid(`Pick one of: ${listOptions(spec)}.`);
}

function checkMultiselect(spec: AskSpec, input: AnswerInput): AnswerCheck {
  if (input.kind === "options") {
    const chosen = new Set(input.indexes);
    if ([...chosen].some((index) => !Number.isInteger(index) || spec.options[index] === undefined)) {
      return invalid("One of those options does not exist.");
    }
    return { ok: true, value: spec.options.filter((_, index) => chosen.has(index)).map((option) => option.value) };
  }
  if (input.kind === "text" && input.text.trim() === "") return { ok: true, value: [] };
  return invalid(`Pick any of: ${listOptions(spec)} (separate several with commas).`);
}

function checkInput(spec: AskSpec, input: AnswerInput): AnswerCheck {
  if (input.kind !== "text") return invalid("Type an answer.");
  if (input.text.length > MAX_TEXT_ANSWER_CHARS) return invalid(`Keep the answer under ${MAX_TEXT_ANSWER_CHARS} characters.`);
  if (input.text.trim() === "" && typeof spec.default === "string") return { ok: true, value: spec.default };
  return { ok: true, value: input.text };
}

function checkForm(spec: AskSpec, input: AnswerInput): AnswerCheck {
  if (input.kind !== "form") return invalid('This question is a form: use its "Fill in" button.');
  const value: Record<string, string | number | boolean> = {};
  const fieldErrors: Record<string, string> = {};
  for (const field of spec.fields) {
    const raw = Object.hasOwn(input.values, field.name) ? input.values[field.name] : undefined;
    if (field.type === "toggle") {
      value[field.name] = raw === true || (typeof raw === "string" && YES.has(raw.trim().toLowerCase()));
      continue;
    }
    const text = typeof raw === "string" ? raw.trim() : "";
    if (text === "") {
      if (field.required) fieldErrors[field.name] = `${field.label} is required.`;
      continue;
    }
    if (text.length > MAX_TEXT_ANSWER_CHARS) {
      fieldErrors[field.name] = `Keep ${field.label} under ${MAX_TEXT_ANSWER_CHARS} characters.`;
    } else if (field.type === "number") {
      const number = Number(text.replace(/,/g, ""));
      if (!Number.isFinite(number)) fieldErrors[field.name] = `${field.label} must be a number.`;
      else value[field.name] = number;
    } else {
      value[field.name] = field.type === "password" ? (raw as string) : text;
    }
  }
  if (Object.keys(fieldErrors).length > 0) return { ok: false, message: Object.values(fieldErrors).join(" "), fieldErrors };
  return { ok: true, value };
}

function listOptions(spec: AskSpec): string {
  return spec.options.map((option, index) => `${index + 1}. ${option.label}`).join(", ");
}

function invalid(message: string): AnswerCheck {
  return { ok: false, message };
}

export const SECRET_MASK = "••••";

/** The answer as it may be stored, logged or shown: password fields become ••••. */
export function maskAnswer(spec: AskSpec, value: AnswerValue): AnswerValue {
  if (spec.type !== "form" || typeof value !== "object" || Array.isArray(value)) return value;
  const masked: Record<string, string | number | boolean> = { ...value };
  for (const field of spec.fields) {
    if (field.type === "password" && Object.hasOwn(masked, field.name)) masked[field.name] = SECRET_MASK;
  }
  return masked;
}

/** True when the answer carries a secret, so the in-memory and the stored result differ. */
export function hasSecret(spec: AskSpec): boolean {
  return spec.type === "form" && spec.fields.some((field) => field.type === "password");
}
