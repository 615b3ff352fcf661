import type { ElicitationField, ElicitationRequest, ElicitationResponse } from "../ports/tool-provider.js";
import type { AnswerValue } from "./answer.js";
import { type AskField, type AskSpec, clampTimeout, SPEC_LIMITS } from "./spec.js";

/** A server's `elicitation/create` as a form card for the people who may answer the session (DESIGN §11). */
export function elicitationSpec(request: ElicitationRequest, server: string, timeoutSeconds: number): AskSpec {
  const fields = request.fields.slice(0, SPEC_LIMITS.fields).map(toAskField);
  const message = request.message.trim().slice(0, SPEC_LIMITS.questionChars - 200);
  return {
    type: "form",
    dialect: "typed",
    title: `${server} asks`,
    question: message.length > 0 ? message : `${server} asks for a few details.`,
    options: [],
    fields,
    timeoutSeconds: clampTimeout(timeoutSeconds),
    allowOther: false,
    detached: true,
  };
}

function toAskField(field: ElicitationField): AskField {
  const choices = field.options && field.options.length > 0 ? ` (one of: ${field.options.join(", ")})` : "";
  const fallback = field.default !== undefined ? ` [default: ${String(field.default)}]` : "";
  return {
    name: field.name,
    label: `${field.label}${choices}${fallback}`.slice(0, SPEC_LIMITS.fieldLabelChars),
    type: field.type === "boolean" ? "toggle" : field.type === "string" ? "text" : "number",
    required: field.required,
  };
}

/**
 * The form's answer as the server expects it: integers as integers, a choice one of its options, a blank field
 * its default. Anything that does not fit is `cancel`: the server refuses a mismatched answer anyway.
 */
export function elicitationAnswer(request: ElicitationRequest, value: AnswerValue | null): ElicitationResponse {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { action: "cancel" };
  const content: Record<string, string | number | boolean> = {};
  for (const field of request.fields) {
    const given = Object.hasOwn(value, field.name) ? value[field.name] : undefined;
    const answer = given === undefined && field.default !== undefined ? field.default : given;
    if (answer === undefined) {
      if (field.required) return { action: "cancel" };
      continue;
    }
    if (field.type === "integer" && !(typeof answer === "number" && Number.isInteger(answer))) return { action: "cancel" };
    if (field.options && field.options.length > 0 && !field.options.includes(String(answer))) return { action: "cancel" };
    content[field.name] = answer;
  }
  return { action: "accept", content };
}
