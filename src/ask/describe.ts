import type { AnswerValue } from "./answer.js";
import { describeDecision } from "./approval.js";
import type { AskSpec } from "./spec.js";

const MAX_SUMMARY_CHARS = 300;

/** One short line for a settled card: labels instead of values, secrets already masked. */
export function describeAnswer(spec: AskSpec, value: AnswerValue | null, other?: boolean): string {
  if (value === null) return "";
  const label = (raw: string) => spec.options.find((option) => option.value === raw)?.label ?? raw;
  let text: string;
  if (spec.type === "approval") text = describeDecision(value);
  else if (spec.type === "confirm") text = value === true ? "Yes" : "No";
  else if (spec.type === "message") text = "Continued";
  else if (Array.isArray(value)) text = value.length === 0 ? "(none)" : value.map(label).join(", ");
  else if (typeof value === "object") {
    text = spec.fields
      .filter((field) => Object.hasOwn(value, field.name))
      .map((field) => `${field.label}: ${field.type === "toggle" ? (value[field.name] ? "on" : "off") : String(value[field.name])}`)
      .join(", ");
  }
  // An empty answer still reads as one: "✓ (empty) by alice", not a blank.
  else if (typeof value === "string" && value.trim() === "") text = "(empty)";
  else if (typeof value === "string") text = other ? `“${value}”` : label(value);
  else text = String(value);
  return text.length > MAX_SUMMARY_CHARS ? `${text.slice(0, MAX_SUMMARY_CHARS - 1)}…` : text;
}
