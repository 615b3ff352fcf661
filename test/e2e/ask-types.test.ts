import { describe, expect, it } from "vitest";
import type { AnswerInput } from "../../src/ask/answer.js";
import { ask, lastToolResults, reply } from "../fakes/fake-anthropic.js";
import { freshHarnessPerTest, OWNER } from "../support/harness.js";

const setup = freshHarnessPerTest();

/** Asks one question, answers it, and returns the tool_result content the model received next. */
async function roundTrip(input: unknown, answer: AnswerInput): Promise<unknown> {
  setup.fake.script(ask(input), reply("Thanks."));
  await setup.harness.say("help me");
  const card = setup.harness.lastCard();
  expect(await setup.harness.engine.answer(card.askId, OWNER, answer)).toEqual({ kind: "accepted" });
  await setup.harness.engine.idle();
  expect(setup.harness.adapter.messages.at(-1)?.text).toBe("Thanks.");
  const results = lastToolResults(setup.fake.requests.at(-1));
  expect(results).toHaveLength(1);
  return JSON.parse(results[0]!.content);
}

describe("each ask type, answered end to end", () => {
  it("candidates answered with free text are marked other", async () => {
    const result = await roundTrip(
      { question: "Which region?", candidates: ["eu-west-1", "us-east-1"] },
      { kind: "text", text: "ap-south-1" },
    );
    expect(result).toEqual({ ok: true, value: "ap-south-1", other: true });
  });

  it("choices answered by typing an option's label read as that option", async () => {
    const result = await roundTrip({ question: "Proceed?", choices: ["yes", "no"] }, { kind: "text", text: "No" });
    expect(result).toEqual({ ok: true, value: "no" });
  });

  it("confirm reads true or false", async () => {
    expect(await roundTrip({ type: "confirm", question: "Restart the server?" }, { kind: "option", index: 1 })).toEqual({
      ok: true,
      value: false,
    });
  });

  it("select returns the option value, not its label", async () => {
    const result = await roundTrip(
      {
        type: "select",
        question: "Size?",
        options: [
          { value: "s", label: "Small" },
          { value: "l", label: "Large" },
        ],
      },
      { kind: "option", index: 1 },
    );
    expect(result).toEqual({ ok: true, value: "l" });
  });

  it("multiselect returns every picked value, and may be empty", async () => {
    const input = { type: "multiselect", question: "Which checks?", options: ["lint", "test", "bench"] };
    expect(await roundTrip(input, { kind: "options", indexes: [2, 0] })).toEqual({ ok: true, value: ["lint", "bench"] });
  });

  it("input returns the text", async () => {
    expect(await roundTrip({ type: "input", question: "Commit message?" }, { kind: "text", text: "fix: typo" })).toEqual({
      ok: true,
      value: "fix: typo",
    });
  });

  it("buttons return the tapped value", async () => {
    expect(await roundTrip({ type: "buttons", question: "Action?", options: ["retry", "skip"] }, { kind: "option", index: 0 })).toEqual({
      ok: true,
      value: "retry",
    });
  });

  it("form returns numbers as numbers and toggles as booleans", async () => {
    const result = await roundTrip(
      {
        type: "form",
        question: "Scale the service",
        fields: [
          { name: "replicas", label: "Replicas", type: "number", required: true },
          { name: "note", label: "Note", type: "text" },
          { name: "canary", label: "Canary first", type: "toggle" },
        ],
      },
      { kind: "form", values: { replicas: "3", note: "", canary: true } },
    );
    expect(result).toEqual({ ok: true, value: { replicas: 3, canary: true } });
  });

  it("message reads acknowledged", async () => {
    expect(await roundTrip({ type: "message", question: "The deploy window opens at 14:00." }, { kind: "acknowledge" })).toEqual({
      ok: true,
      value: "acknowledged",
    });
  });
});

describe("answers that do not fit the question", () => {
  it("refuses free text when allow_other is false and leaves the ask pending", async () => {
    setup.fake.script(ask({ type: "select", question: "Tier?", options: ["free", "pro"], allow_other: false }), reply("ok"));
    await setup.harness.say("upgrade me");
    const card = setup.harness.lastCard();
    const outcome = await setup.harness.engine.answer(card.askId, OWNER, { kind: "text", text: "enterprise" });
    expect(outcome).toMatchObject({ kind: "invalid" });
    expect(setup.fake.requests).toHaveLength(1);
    expect(await setup.harness.engine.answer(card.askId, OWNER, { kind: "text", text: "pro" })).toEqual({ kind: "accepted" });
  });

  it("returns field errors for a form missing a required value or with a bad number", async () => {
    setup.fake.script(
      ask({
        type: "form",
        question: "Limits",
        fields: [
          { name: "name", label: "Name", type: "text", required: true },
          { name: "limit", label: "Limit", type: "number" },
        ],
      }),
    );
    await setup.harness.say("set limits");
    const outcome = await setup.harness.engine.answer(setup.harness.lastCard().askId, OWNER, {
      kind: "form",
      values: { name: " ", limit: "ten" },
    });
    expect(outcome).toEqual({
      kind: "invalid",
      message: "Name is required. Limit must be a number.",
      fieldErrors: { name: "Name is required.", limit: "Limit must be a number." },
    });
    expect(setup.fake.requests).toHaveLength(1);
  });
});
