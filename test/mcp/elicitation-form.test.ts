import type { ElicitRequestFormParams } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { checkElicitationAnswer, toElicitationFields } from "../../adapters/mcp/elicitation-form.js";

type Schema = ElicitRequestFormParams["requestedSchema"];

const SCHEMA: Schema = {
  type: "object",
  properties: {
    confirm: { type: "boolean", title: "Confirm", description: "Really delete" },
    reason: { type: "string", maxLength: 5 },
    count: { type: "integer", title: "How many", minimum: 1, default: 1 },
    ratio: { type: "number", maximum: 1 },
    color: { type: "string", enum: ["red", "green"] },
    size: {
      type: "string",
      oneOf: [
        { const: "s", title: "Small" },
        { const: "l", title: "Large" },
      ],
      default: "s",
    },
  },
  required: ["confirm"],
};

describe("toElicitationFields", () => {
  it("narrows each primitive property to a field: label from title and description, enum and oneOf as options, default, required", () => {
    const result = toElicitationFields(SCHEMA);
    expect(result).toEqual({
      ok: true,
      fields: [
        { name: "confirm", label: "Confirm: Really delete", type: "boolean", required: true },
        { name: "reason", label: "reason", type: "string", required: false },
        { name: "count", label: "How many", type: "integer", required: false, default: 1 },
        { name: "ratio", label: "ratio", type: "number", required: false },
        { name: "color", label: "color", type: "string", required: false, options: ["red", "green"] },
        { name: "size", label: "size", type: "string", required: false, options: ["s", "l"], default: "s" },
      ],
    });
  });

  it("leaves out an optional multi-select, and refuses the form when one is required", () => {
    const multi = { type: "array" as const, items: { type: "string" as const, enum: ["a", "b"] } };
    const optional = toElicitationFields({ type: "object", properties: { tags: multi, name: { type: "string" } } });
    expect(optional).toEqual({ ok: true, fields: [{ name: "name", label: "name", type: "string", required: false }] });
    expect(toElicitationFields({ type: "object", properties: { tags: multi }, required: ["tags"] })).toEqual({
      ok: false,
      reason: 'field "tags" is of a kind Parley cannot show (array)',
    });
  });
});

describe("checkElicitationAnswer", () => {
  it("accepts a matching answer and drops fields the form did not ask for", () => {
    expect(checkElicitationAnswer(SCHEMA, { confirm: true, count: 2, color: "red", extra: "x" })).toEqual({
      ok: true,
      content: { confirm: true, count: 2, color: "red" },
    });
  });

  it("refuses a missing required field, wrong types, a value outside the options or the bounds", () => {
    const result = checkElicitationAnswer(SCHEMA, { reason: "too long", count: 1.5, ratio: 2, color: "blue", size: true });
    expect(result).toEqual({
      ok: false,
      problems: [
        "confirm: required",
        "reason: expected at most 5 characters",
        "count: expected a whole number",
        "ratio: expected at most 1",
        "color: expected one of red, green",
        "size: expected text",
      ],
    });
    expect(checkElicitationAnswer(SCHEMA, { confirm: "yes" })).toEqual({ ok: false, problems: ["confirm: expected true or false"] });
    expect(checkElicitationAnswer(SCHEMA, { confirm: true, count: 0 })).toEqual({ ok: false, problems: ["count: expected at least 1"] });
  });
});
