import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readSpec, writeSpec } from "../../db/records.js";
import { type AnswerInput, answerFromText, checkAnswer, maskAnswer } from "../../src/ask/answer.js";
import { describeAnswer } from "../../src/ask/describe.js";
import { ASK_TYPES, FIELD_TYPES, parseAskSpec, SPEC_LIMITS } from "../../src/ask/spec.js";

/** `npm test` runs a few hundred cases per property; `npm run test:chaos` sets FUZZ_RUNS=10000. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);

const nastyString = fc.oneof(
  fc.string(),
  fc.string({ unit: "grapheme", maxLength: 50 }),
  fc.string({ unit: fc.integer({ min: 0, max: 0x1f }).map((code) => String.fromCharCode(code)) }),
  fc.constantFrom(
    "__proto__",
    "constructor",
    "prototype",
    "<!channel>",
    "@everyone",
    "'; DROP TABLE asks; --",
    "**bold** _x_ `code`",
    "\u202e\u0000",
  ),
  fc.integer({ min: 2990, max: 9100 }).map((length) => "x".repeat(length)),
);
const option = fc.oneof(
  nastyString,
  fc.record({ value: nastyString, label: fc.option(nastyString, { nil: undefined }) }, { requiredKeys: ["value"] }),
);
const field = fc.record({
  name: nastyString,
  label: fc.option(nastyString, { nil: undefined }),
  type: fc.oneof(fc.constantFrom(...FIELD_TYPES), nastyString),
  required: fc.boolean(),
});
const plausibleSpec = fc.record(
  {
    type: fc.oneof(fc.constantFrom(...ASK_TYPES), nastyString),
    question: nastyString,
    title: nastyString,
    options: fc.array(option, { maxLength: 120 }),
    fields: fc.array(field, { maxLength: 25 }),
    candidates: fc.array(option, { maxLength: 10 }),
    choices: fc.array(option, { maxLength: 10 }),
    default: fc.oneof(nastyString, fc.boolean()),
    timeout_s: fc.oneof(fc.double(), fc.integer()),
    allow_other: fc.boolean(),
  },
  { requiredKeys: [] },
);
const anyInput = fc.oneof(
  plausibleSpec,
  fc.jsonValue({ maxDepth: 8 }),
  fc.anything({ maxDepth: 4, withObjectString: true, withNullPrototype: true }),
);

describe("fuzzing ask_user input from the model", () => {
  it("every input becomes a valid spec within the limits, or a clear ERROR; nothing throws", () => {
    fc.assert(
      fc.property(anyInput, (input) => {
        const result = parseAskSpec(input, 86400);
        if (!result.ok) {
          expect(result.error.startsWith("ERROR: ask_user: ")).toBe(true);
          expect(result.error.length).toBeLessThan(2000);
          return;
        }
        const { spec } = result;
        expect(spec.question.trim().length).toBeGreaterThan(0);
        expect(spec.question.length).toBeLessThanOrEqual(SPEC_LIMITS.questionChars);
        expect(spec.options.length).toBeLessThanOrEqual(SPEC_LIMITS.options);
        expect(new Set(spec.options.map((item) => item.value)).size).toBe(spec.options.length);
        expect(spec.timeoutSeconds).toBeGreaterThanOrEqual(5);
        expect(spec.timeoutSeconds).toBeLessThanOrEqual(604800);
        if (spec.type === "select" || spec.type === "multiselect" || spec.type === "buttons")
          expect(spec.options.length).toBeGreaterThan(0);
        if (spec.type === "form") expect(spec.fields.length).toBeGreaterThan(0);
        // Whatever parses can be stored and read back unchanged.
        expect(readSpec(writeSpec(spec))).toEqual(spec);
      }),
      { numRuns: RUNS },
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("every answer to every type is accepted with a value of the right shape, or refused with a message", () => {
    const label = fc.string({ minLength: 1, maxLength: 40 }).filter((text) => text.trim().length > 0);
    const validSpec = fc
      .record({
        type: fc.constantFrom(...ASK_TYPES),
        question: nastyString.filter((text) => text.trim().length > 0 && text.length <= 8000),
        options: fc.uniqueArray(label, { minLength: 1, maxLength: 30 }),
        fields: fc.uniqueArray(
          fc.record({ name: fc.stringMatching(/^[a-z][a-z0-9_]{0,10}$/), type: fc.constantFrom(...FIELD_TYPES), required: fc.boolean() }),
          { minLength: 1, maxLength: 8, selector: (item) => item.name },
        ),
        allow_other: fc.boolean(),
      })
      .map(({ type, question, options, fields, allow_other }) => {
        const input: Record<string, unknown> = { type, question, allow_other };
        if (type === "select" || type === "multiselect" || type === "buttons") input.options = options;
        if (type === "form") input.fields = fields;
        return parseAskSpec(input, 60);
      });
    const answer: fc.Arbitrary<AnswerInput> = fc.oneof(
      fc.record({ kind: fc.constant("option" as const), index: fc.integer({ min: -3, max: 130 }) }),
      fc.record({ kind: fc.constant("options" as const), indexes: fc.array(fc.integer({ min: -3, max: 130 }), { maxLength: 12 }) }),
      fc.record({ kind: fc.constant("text" as const), text: nastyString }),
      fc.record({ kind: fc.constant("form" as const), values: fc.dictionary(nastyString, fc.oneof(nastyString, fc.boolean())) }),
      fc.constant({ kind: "acknowledge" as const }),
    );
    fc.assert(
      fc.property(validSpec, answer, nastyString, (parsed, input, text) => {
        if (!parsed.ok) throw new Error(`a valid spec was refused: ${parsed.error}`);
        const { spec } = parsed;
        for (const attempt of [input, answerFromText(spec, text)]) {
          const check = checkAnswer(spec, attempt);
          if (!check.ok) {
            expect(typeof check.message).toBe("string");
            continue;
          }
          const { value } = check;
          if (spec.type === "confirm") expect(typeof value).toBe("boolean");
          if (spec.type === "multiselect") expect(Array.isArray(value)).toBe(true);
          if (spec.type === "form") {
            expect(typeof value === "object" && !Array.isArray(value)).toBe(true);
            const masked = JSON.stringify(maskAnswer(spec, value));
            for (const secret of spec.fields.filter((item) => item.type === "password")) {
              const raw = (value as Record<string, unknown>)[secret.name];
              if (typeof raw === "string" && raw.length > 4) expect(masked.includes(JSON.stringify(raw))).toBe(false);
            }
          }
          if ((spec.type === "select" || spec.type === "buttons") && !check.other)
            expect(spec.options.map((item) => item.value)).toContain(value);
          expect(describeAnswer(spec, maskAnswer(spec, value), check.other).length).toBeLessThanOrEqual(300);
        }
      }),
      { numRuns: RUNS },
    );
  });
});
