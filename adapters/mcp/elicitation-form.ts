import type { ElicitRequestFormParams, PrimitiveSchemaDefinition } from "@modelcontextprotocol/sdk/types.js";
import type { ElicitationField, ElicitationResponse } from "../../src/ports/tool-provider.js";

type RequestedSchema = ElicitRequestFormParams["requestedSchema"];
type Answer = Extract<ElicitationResponse, { action: "accept" }>["content"];

/** The fields a card can draw, or why the form cannot be drawn. */
export type FormFieldsResult = { ok: true; fields: ElicitationField[] } | { ok: false; reason: string };

/**
 * Narrows a form's `requestedSchema` to the fields a card can draw. A property of another kind (a multi-select)
 * is left out when optional; when required, the whole form is refused, since no answer could satisfy it.
 */
export function toElicitationFields(schema: RequestedSchema): FormFieldsResult {
  const required = new Set(schema.required ?? []);
  const fields: ElicitationField[] = [];
  for (const [name, property] of Object.entries(schema.properties)) {
    const field = toField(name, property, required.has(name));
    if (field) fields.push(field);
    else if (required.has(name)) return { ok: false, reason: `field "${name}" is of a kind Parley cannot show (${property.type})` };
  }
  return { ok: true, fields };
}

function toField(name: string, property: PrimitiveSchemaDefinition, required: boolean): ElicitationField | undefined {
  if (property.type === "array") return undefined;
  const label = [property.title ?? name, property.description].filter(Boolean).join(": ");
  const field: ElicitationField = { name, label, type: property.type, required };
  const options = optionsOf(property);
  if (options) field.options = options;
  if (property.default !== undefined) field.default = property.default;
  return field;
}

function optionsOf(property: PrimitiveSchemaDefinition): string[] | undefined {
  if ("enum" in property && Array.isArray(property.enum)) return property.enum;
  if ("oneOf" in property && Array.isArray(property.oneOf)) return property.oneOf.map((option) => option.const);
  return undefined;
}

/** The answer as the server will accept it (unknown fields dropped), or what is wrong with it. */
export type AnswerCheck = { ok: true; content: Answer } | { ok: false; problems: string[] };

/**
 * Checks an answer against the form's schema before it is sent: the server refuses one that does not match,
 * and the tool then fails instead of going on.
 */
export function checkElicitationAnswer(schema: RequestedSchema, content: Answer): AnswerCheck {
  const required = new Set(schema.required ?? []);
  const problems: string[] = [];
  const checked: Answer = {};
  for (const [name, property] of Object.entries(schema.properties)) {
    const value = content[name];
    if (value === undefined) {
      if (required.has(name)) problems.push(`${name}: required`);
      continue;
    }
    const problem = checkValue(property, value);
    if (problem) problems.push(`${name}: ${problem}`);
    else checked[name] = value;
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, content: checked };
}

function checkValue(property: PrimitiveSchemaDefinition, value: string | number | boolean): string | undefined {
  switch (property.type) {
    case "boolean":
      return typeof value === "boolean" ? undefined : "expected true or false";
    case "number":
    case "integer":
      if (typeof value !== "number" || !Number.isFinite(value)) return "expected a number";
      if (property.type === "integer" && !Number.isInteger(value)) return "expected a whole number";
      if (property.minimum !== undefined && value < property.minimum) return `expected at least ${property.minimum}`;
      if (property.maximum !== undefined && value > property.maximum) return `expected at most ${property.maximum}`;
      return undefined;
    case "string": {
      if (typeof value !== "string") return "expected text";
      const options = optionsOf(property);
      if (options && !options.includes(value)) return `expected one of ${options.join(", ")}`;
      if ("minLength" in property && property.minLength !== undefined && value.length < property.minLength)
        return `expected at least ${property.minLength} characters`;
      if ("maxLength" in property && property.maxLength !== undefined && value.length > property.maxLength)
        return `expected at most ${property.maxLength} characters`;
      return undefined;
    }
    default:
      return "a kind of field Parley cannot fill";
  }
}
