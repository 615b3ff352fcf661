import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkMessagePayload, checkModalPayload } from "../../adapters/discord/check-payload.js";
import { componentId, modalId, parseComponentId, parseModalId } from "../../adapters/discord/custom-id.js";
import { renderCard } from "../../adapters/discord/render-card.js";
import { formParts, renderFormModal, renderTextModal } from "../../adapters/discord/render-modal.js";
import { renderSettledCard } from "../../adapters/discord/render-settlement.js";
import { splitMessage } from "../../adapters/discord/split-message.js";
import { ASK_TYPES, FIELD_TYPES, parseAskSpec, SPEC_LIMITS } from "../../src/ask/spec.js";
import { asAskId, asSessionId } from "../../src/ports/ids.js";
import { messageErrors, modalErrors } from "../fakes/fake-discord-limits.js";
import { cardFor } from "./card-fixtures.js";

const text = (max: number) => fc.string({ minLength: 1, maxLength: max, unit: "grapheme-ascii" }).filter((value) => value.trim() !== "");
const option = fc.oneof(
  text(SPEC_LIMITS.optionValueChars),
  fc.record({ value: text(SPEC_LIMITS.optionValueChars), label: text(SPEC_LIMITS.optionLabelChars) }),
);
const options = fc.uniqueArray(option, {
  minLength: 1,
  maxLength: SPEC_LIMITS.options,
  selector: (entry) => (typeof entry === "string" ? entry : entry.value),
});
const field = fc.record(
  {
    name: fc.stringMatching(/^[a-z_][a-z0-9_]{0,20}$/),
    label: text(SPEC_LIMITS.fieldLabelChars),
    type: fc.constantFrom(...FIELD_TYPES),
    required: fc.boolean(),
  },
  { requiredKeys: ["name", "type"] },
);
const fields = fc.uniqueArray(field, { minLength: 1, maxLength: SPEC_LIMITS.fields, selector: (entry) => entry.name });
const common = {
  question: fc.oneof(text(200), text(SPEC_LIMITS.questionChars)),
  title: fc.option(text(SPEC_LIMITS.titleChars), { nil: undefined }),
  allow_other: fc.option(fc.boolean(), { nil: undefined }),
  timeout_s: fc.option(fc.integer({ min: -10, max: 10_000_000 }), { nil: undefined }),
};

/** Raw model input in all three dialects and every type; parseAskSpec normalises it as in production. */
const rawSpec = fc.oneof(
  fc.record({ ...common, candidates: options }, { requiredKeys: ["question", "candidates"] }),
  fc.record({ ...common, choices: options }, { requiredKeys: ["question", "choices"] }),
  fc.constantFrom(...ASK_TYPES).chain((type) =>
    fc.record(
      {
        ...common,
        type: fc.constant(type),
        ...(type === "select" || type === "multiselect" || type === "buttons" ? { options } : {}),
        ...(type === "form" ? { fields } : {}),
        ...(type === "confirm" ? { default: fc.option(fc.boolean(), { nil: undefined }) } : {}),
        ...(type === "input" ? { default: fc.option(text(300), { nil: undefined }) } : {}),
      },
      {
        requiredKeys: [
          "question",
          "type",
          ...(type === "form" ? ["fields" as const] : []),
          ...(type.endsWith("select") || type === "buttons" ? ["options" as const] : []),
        ],
      },
    ),
  ),
);

const strip = (value: Record<string, unknown>) => JSON.parse(JSON.stringify(value)) as Record<string, unknown>;

describe("any valid AskSpec renders within Discord's limits", () => {
  it("cards, modals and settled cards pass the adapter's checks and the fake Discord's", () => {
    fc.assert(
      fc.property(rawSpec, fc.string({ maxLength: 300 }), (raw, answerText) => {
        const parsed = parseAskSpec(strip(raw), 86_400);
        expect(parsed.ok).toBe(true);
        const card = cardFor(strip(raw));
        const body = renderCard(card);
        expect(checkMessagePayload(body)).toEqual([]);
        expect(messageErrors(strip(body as never))).toEqual({});
        expect(body.content).toMatch(/expires <t:\d+:R>$/);
        const ids = (body.components as unknown as Array<{ components: Array<{ custom_id: string }> }>).flatMap((row) =>
          row.components.map((component) => component.custom_id),
        );
        // Cancel, then Stop for the turn: every other id belongs to the ask.
        expect(ids.slice(-2)).toEqual([`ask:${card.askId}:cancel`, `stop:${card.sessionId}`]);
        for (const id of ids.slice(0, -1)) expect(parseComponentId(id)).toMatchObject({ askId: card.askId });

        const modals = [
          ...formParts(card.spec).map((_, part) => renderFormModal(card.askId, card.spec, part)),
          renderTextModal(card.askId, card.spec, "text", answerText),
          renderTextModal(card.askId, card.spec, "other"),
        ];
        for (const modal of modals) {
          expect(checkModalPayload(modal)).toEqual([]);
          expect(modalErrors(strip(modal as never))).toEqual({});
        }
        const settled = renderSettledCard(card, { status: "answered", answerText, by: "111" });
        expect(settled.content.length).toBeLessThanOrEqual(2000);
        expect(settled.content.endsWith(`answered by <@111>`)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

describe("custom ids", () => {
  it("round-trip and stay within 100 characters", () => {
    const askId = fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/).map(asAskId);
    const index = fc.integer({ min: 0, max: 999 });
    const action = fc.oneof(
      fc.record({ kind: fc.constant("option" as const), askId, index }),
      fc.record({ kind: fc.constantFrom("pick" as const, "multi" as const), askId, group: index }),
      fc.record({ kind: fc.constantFrom("done" as const, "cancel" as const, "continue" as const, "other" as const), askId }),
      fc.record({ kind: fc.constant("open" as const), askId, part: index }),
      fc.record({ kind: fc.constant("stop" as const), sessionId: fc.uuid().map(asSessionId) }),
    );
    fc.assert(
      fc.property(action, (value) => {
        const id = componentId(value);
        expect(id.length).toBeLessThanOrEqual(100);
        expect(parseComponentId(id)).toEqual(value);
      }),
    );
    fc.assert(
      fc.property(askId, index, (id, part) => {
        expect(parseModalId(modalId({ kind: "part", askId: id, part }))).toEqual({ kind: "part", askId: id, part });
      }),
    );
  });
});

describe("splitMessage", () => {
  it("keeps room for the closing fence when a code block opens at the end of a nearly full message", () => {
    // Found by the property below (seed -1102281730): a chunk of 2,004 characters.
    const markdown = ["x".repeat(1992), "```ts", "y".repeat(100), "```"].join("\n");
    for (const chunk of splitMessage(markdown)) expect(chunk.length).toBeLessThanOrEqual(2000);
  });

  it("cuts any Markdown into messages of at most 2,000 characters without losing text", () => {
    const line = fc.oneof(
      fc.string({ maxLength: 300 }),
      fc.constant("```ts"),
      fc.constant("```"),
      fc.string({ minLength: 2100, maxLength: 5000 }),
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 40 }), (lines) => {
        const markdown = lines.join("\n");
        const chunks = splitMessage(markdown);
        for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(2000);
        const squash = (value: string) => value.replace(/```\w*/g, "").replace(/\s+/g, "");
        expect(squash(chunks.join("\n"))).toBe(squash(markdown));
      }),
      { numRuns: 200 },
    );
  });
});
