import { describe, expect, it } from "vitest";
import { ASK_TYPES, parseAskSpec } from "../../src/ask/spec.js";

const parse = (input: unknown) => parseAskSpec(input, 86400);
const errorOf = (input: unknown) => {
  const result = parse(input);
  if (result.ok) throw new Error("expected an error");
  return result.error;
};

describe("parseAskSpec: the three dialects", () => {
  it("reads candidates as a select that accepts free text", () => {
    expect(parse({ question: "Which?", candidates: ["a", "b"] })).toEqual({
      ok: true,
      spec: {
        type: "select",
        dialect: "candidates",
        question: "Which?",
        options: [
          { value: "a", label: "a" },
          { value: "b", label: "b" },
        ],
        fields: [],
        timeoutSeconds: 86400,
        allowOther: true,
      },
    });
  });

  it("reads choices, and honours allow_other: false", () => {
    const result = parse({ question: "Which?", choices: ["x", { value: "y", label: "Why" }], allow_other: false });
    expect(result.ok && result.spec).toMatchObject({
      type: "select",
      dialect: "choices",
      allowOther: false,
      options: [{ value: "x" }, { value: "y", label: "Why" }],
    });
  });

  it.each(ASK_TYPES)("reads a typed %s card", (type) => {
    const input: Record<string, unknown> = { type, question: "Q?" };
    if (type === "select" || type === "multiselect" || type === "buttons") input.options = ["one", "two"];
    if (type === "form") input.fields = [{ name: "host", type: "text" }];
    const result = parse(input);
    expect(result.ok && result.spec.type).toBe(type);
  });

  it("reads a bare question as free-text input", () => {
    expect(parse({ question: "Anything else?" })).toMatchObject({ ok: true, spec: { type: "input" } });
  });

  it("clamps timeout_s to 5 s … 7 days", () => {
    expect(parse({ type: "confirm", question: "?", timeout_s: 1 })).toMatchObject({ spec: { timeoutSeconds: 5 } });
    expect(parse({ type: "confirm", question: "?", timeout_s: 10_000_000 })).toMatchObject({ spec: { timeoutSeconds: 604800 } });
  });
});

describe("parseAskSpec: errors the model can act on", () => {
  it("an empty question", () => {
    expect(errorOf({ type: "confirm", question: "   " })).toBe(
      'ERROR: ask_user: "question" is empty: say what you need to know in one sentence.',
    );
  });

  it("select without options", () => {
    expect(errorOf({ type: "select", question: "Which?" })).toContain('type "select" needs "options"');
  });

  it("an unknown type", () => {
    expect(errorOf({ type: "slider", question: "How much?" })).toBe(
      'ERROR: ask_user: "type" must be one of confirm, select, multiselect, input, buttons, form, message.',
    );
  });

  it("a bad field type", () => {
    expect(errorOf({ type: "form", question: "Q", fields: [{ name: "when", type: "date" }] })).toBe(
      'ERROR: ask_user: "fields.0.type" must be one of text, password, number, toggle.',
    );
  });

  it("a duplicate option value", () => {
    expect(errorOf({ type: "buttons", question: "Q", options: ["a", { value: "a", label: "A again" }] })).toBe(
      'ERROR: ask_user: duplicate option value "a": every option needs a distinct value.',
    );
  });

  it("a non-object input, unknown keys, and prototype keys", () => {
    expect(errorOf("what?")).toContain("input must be an object");
    expect(errorOf({ type: "select", question: "Q", option: ["a"] })).toContain('unknown key(s) "option"');
    expect(errorOf(JSON.parse('{"type":"form","question":"Q","fields":[{"name":"__proto__","type":"text"}]}'))).toContain("reserved");
    expect(errorOf(JSON.parse('{"question":"Q","__proto__":{"polluted":true}}'))).toContain("unknown key");
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("options on a type that takes none, and a default that is not an option", () => {
    expect(errorOf({ type: "confirm", question: "Q", options: ["a"] })).toContain('type "confirm" takes no "options"');
    expect(errorOf({ type: "select", question: "Q", options: ["a"], default: "b" })).toContain("not one of the option values");
  });

  it("a question too long to show", () => {
    expect(errorOf({ type: "input", question: "x".repeat(9000) })).toContain("keep it under 8000");
  });
});
