import { describe, expect, it } from "vitest";
import { answerFromText, checkAnswer, maskAnswer } from "../../src/ask/answer.js";
import { approvalSpec, typedDecision } from "../../src/ask/approval.js";
import { type AskSpec, parseAskSpec } from "../../src/ask/spec.js";

function spec(input: unknown): AskSpec {
  const result = parseAskSpec(input, 60);
  if (!result.ok) throw new Error(result.error);
  return result.spec;
}

const select = spec({ type: "select", question: "Env?", options: [{ value: "stg", label: "Staging" }, "production"] });
const strict = spec({ type: "buttons", question: "Env?", options: ["a", "b"], allow_other: false });
const confirm = spec({ type: "confirm", question: "OK?" });
const multi = spec({ type: "multiselect", question: "Which?", options: ["x", "y", "z"] });
const form = spec({
  type: "form",
  question: "Config",
  fields: [
    { name: "port", label: "Port", type: "number", required: true },
    { name: "token", label: "Token", type: "password" },
    { name: "debug", label: "Debug", type: "toggle" },
  ],
});

describe("reading typed replies", () => {
  it("matches an option by label, value or number before treating it as free text", () => {
    expect(answerFromText(select, "staging")).toEqual({ kind: "option", index: 0 });
    expect(answerFromText(select, "stg")).toEqual({ kind: "option", index: 0 });
    expect(answerFromText(select, "2")).toEqual({ kind: "option", index: 1 });
    expect(answerFromText(select, "qa")).toEqual({ kind: "text", text: "qa" });
    expect(answerFromText(multi, "1, z")).toEqual({ kind: "options", indexes: [0, 2] });
  });
});

describe("checkAnswer", () => {
  it("choices: an option, free text through Other, and refusal when allow_other is false", () => {
    expect(checkAnswer(select, { kind: "option", index: 0 })).toEqual({ ok: true, value: "stg" });
    expect(checkAnswer(select, { kind: "text", text: " qa " })).toEqual({ ok: true, value: "qa", other: true });
    expect(checkAnswer(select, { kind: "option", index: 7 })).toMatchObject({ ok: false });
    expect(checkAnswer(strict, { kind: "text", text: "c" })).toEqual({ ok: false, message: "Pick one of: 1. a, 2. b." });
    expect(checkAnswer(select, { kind: "text", text: "  " })).toMatchObject({ ok: false });
  });

  it("confirm: buttons and words", () => {
    expect(checkAnswer(confirm, { kind: "option", index: 0 })).toEqual({ ok: true, value: true });
    expect(checkAnswer(confirm, { kind: "text", text: "No" })).toEqual({ ok: true, value: false });
    expect(checkAnswer(confirm, { kind: "text", text: "maybe" })).toMatchObject({ ok: false });
  });

  it("multiselect: values in option order, empty allowed, bad index refused", () => {
    expect(checkAnswer(multi, { kind: "options", indexes: [2, 0, 2] })).toEqual({ ok: true, value: ["x", "z"] });
    expect(checkAnswer(multi, { kind: "options", indexes: [] })).toEqual({ ok: true, value: [] });
    expect(checkAnswer(multi, { kind: "options", indexes: [3] })).toMatchObject({ ok: false });
  });

  it("input: text as typed, the default for an empty answer", () => {
    expect(checkAnswer(spec({ type: "input", question: "Q" }), { kind: "text", text: "" })).toEqual({ ok: true, value: "" });
    expect(checkAnswer(spec({ type: "input", question: "Q", default: "n/a" }), { kind: "text", text: " " })).toEqual({
      ok: true,
      value: "n/a",
    });
  });

  it("form: numbers parsed, toggles as booleans, required enforced", () => {
    expect(checkAnswer(form, { kind: "form", values: { port: "8080", token: "s3cret", debug: "yes" } })).toEqual({
      ok: true,
      value: { port: 8080, token: "s3cret", debug: true },
    });
    expect(checkAnswer(form, { kind: "form", values: { port: "", debug: false } })).toEqual({
      ok: false,
      message: "Port is required.",
      fieldErrors: { port: "Port is required." },
    });
    expect(checkAnswer(form, { kind: "form", values: { port: "eighty" } })).toMatchObject({
      ok: false,
      fieldErrors: { port: "Port must be a number." },
    });
    expect(checkAnswer(form, { kind: "text", text: "8080" })).toMatchObject({ ok: false });
  });

  it("masks password fields for storage and display", () => {
    expect(maskAnswer(form, { port: 1, token: "s3cret", debug: false })).toEqual({ port: 1, token: "••••", debug: false });
  });

  it("message: any answer acknowledges", () => {
    expect(checkAnswer(spec({ type: "message", question: "FYI" }), { kind: "text", text: "ok" })).toEqual({
      ok: true,
      value: "acknowledged",
    });
  });
});

describe("approval answers", () => {
  const approval = approvalSpec({ tool: "srv__delete_record", description: "Deletes a record.", input: { id: "r1" }, timeoutSeconds: 600 });

  it("a typed reply in a thread always denies, with its text as the reason: only a button approves", () => {
    for (const text of ["ok", "yes", "approve", "1", "👍"])
      expect(checkAnswer(approval, answerFromText(approval, text))).toEqual({ ok: true, value: { decision: "deny", reason: text } });
    expect(checkAnswer(approval, { kind: "option", index: 0 })).toEqual({ ok: true, value: { decision: "approve" } });
  });

  it("where typing is the only way to decide (terminal, /parley answer), approve and deny words are the buttons", () => {
    expect(typedDecision(" Approve ")).toEqual({ kind: "option", index: 0 });
    expect(typedDecision("1")).toEqual({ kind: "option", index: 0 });
    expect(typedDecision("no")).toEqual({ kind: "option", index: 1 });
    expect(typedDecision("not on a Friday")).toBeUndefined();
  });
});
