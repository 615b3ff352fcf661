import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseActionId } from "../../adapters/slack/action-ids.js";
import { renderCard } from "../../adapters/slack/render-card.js";
import { renderAnswerModal } from "../../adapters/slack/render-modal.js";
import { renderSettledCard } from "../../adapters/slack/render-settled.js";
import { ASK_TYPES, FIELD_TYPES, parseAskSpec } from "../../src/ask/spec.js";
import { asAskId, asSessionId } from "../../src/ports/ids.js";
import type { CardView, Settlement } from "../../src/ports/platform-adapter.js";
import { checkMessage, checkView } from "../fakes/fake-slack-limits.js";
import { actionIdsOf } from "./slack-harness.js";

const UNITS = fc.constantFrom("a", "Z", " ", "*", "_", "`", "<", ">", "&", "\n", "#", "-", "😀", "é", "中");

/**
 * Text as a model might write it: any Unicode (emoji included), Slack markup characters and newlines,
 * often near its maximum length so every truncation path is reached.
 */
const text = (maxLength: number) =>
  fc.oneof(
    fc.string({ unit: "grapheme", minLength: 1, maxLength: Math.min(maxLength, 40) }),
    fc
      .tuple(fc.string({ unit: UNITS, minLength: 1, maxLength: 12 }), fc.integer({ min: Math.floor(maxLength * 0.7), max: maxLength }))
      .map(([pattern, length]) =>
        Array.from(pattern.repeat(Math.ceil(length / pattern.length)))
          .slice(0, length)
          .join(""),
      ),
  );
const option = fc.oneof(
  text(500),
  fc.record({ value: text(500), label: fc.option(text(300), { nil: undefined }) }, { requiredKeys: ["value"] }),
);
const options = fc.oneof(
  fc.array(option, { minLength: 1, maxLength: 12 }),
  fc.array(option, { minLength: 90, maxLength: 100 }),
  fc.array(option, { minLength: 1, maxLength: 100 }),
);
const field = fc.record({
  name: fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,20}$/),
  label: fc.option(text(300), { nil: undefined }),
  type: fc.constantFrom(...FIELD_TYPES),
  required: fc.option(fc.boolean(), { nil: undefined }),
});

const typedInput = fc.record(
  {
    type: fc.constantFrom(...ASK_TYPES),
    question: text(8000),
    title: text(200),
    options,
    fields: fc.uniqueArray(field, { minLength: 1, maxLength: 20, selector: (entry) => entry.name }),
    allow_other: fc.boolean(),
    timeout_s: fc.integer({ min: 1, max: 10_000_000 }),
  },
  { requiredKeys: ["type", "question"] },
);
const candidatesInput = fc.record({ question: text(8000), candidates: options });
const rawInput = fc.oneof(typedInput, candidatesInput);

function cardView(input: unknown): CardView | undefined {
  const parsed = parseAskSpec(input, 86400);
  if (!parsed.ok) return undefined;
  return {
    askId: asAskId("Zx9_-ab12cd34"),
    sessionId: asSessionId("0b8e7a7e-8f0e-4a43-9a3f-3a8d1d8f0c11"),
    conversation: { platform: "slack", workspace: "T1", channel: "C1", thread: "1.0" },
    spec: parsed.spec,
    answerers: ["U_OWNER"],
    anyoneInThread: false,
    deadline: 1_800_000_000_000,
    cardRef: null,
    offersStop: true,
  };
}

const settlement: fc.Arbitrary<Settlement> = fc.record(
  {
    status: fc.constantFrom("answered", "cancelled", "expired"),
    answerText: text(300),
    by: fc.constantFrom("U_OWNER", "U_ADMIN"),
    byAdmin: fc.boolean(),
    stopped: fc.boolean(),
  },
  { requiredKeys: ["status"] },
) as fc.Arbitrary<Settlement>;

describe("any valid AskSpec renders within Slack's limits", () => {
  it("cards, modals and settled cards pass the fake Slack's checks", () => {
    let rendered = 0;
    fc.assert(
      fc.property(rawInput, settlement, (input, ending) => {
        const card = cardView(input);
        fc.pre(card !== undefined);
        rendered++;
        const message = renderCard(card!);
        expect(checkMessage(message)).toBeUndefined();
        expect(message.blocks.length).toBeLessThanOrEqual(50);
        const ids = actionIdsOf(message.blocks);
        expect(ids.length).toBeGreaterThan(0);
        // Every id belongs to the ask, but Stop's, last, which names the turn's session.
        expect(parseActionId(ids.at(-1)!)).toEqual({ kind: "stop", sessionId: card!.sessionId });
        for (const id of ids.slice(0, -1)) expect(parseActionId(id)).toMatchObject({ askId: card!.askId });
        if (card!.spec.type === "input" || card!.spec.type === "form")
          expect(checkView(renderAnswerModal(card!.askId, card!.spec))).toBeUndefined();
        const settled = renderSettledCard(card!, ending);
        expect(checkMessage(settled)).toBeUndefined();
        expect(actionIdsOf(settled.blocks)).toEqual([]);
      }),
      { numRuns: 300 },
    );
    // The generator must reach the renderer, or this test would pass without checking anything.
    expect(rendered).toBeGreaterThan(100);
  });
});
