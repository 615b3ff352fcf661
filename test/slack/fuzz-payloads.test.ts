import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { actionIds, parseActionId, parseOptionIndex } from "../../adapters/slack/action-ids.js";
import { readCardRef } from "../../adapters/slack/card-ref.js";
import { parseBlockActions } from "../../adapters/slack/parse-interaction.js";
import { parseMessageEvent } from "../../adapters/slack/parse-message-event.js";
import { parseViewSubmission } from "../../adapters/slack/parse-view-submission.js";
import { ANSWER_BLOCK_ID, fieldBlockId, VALUE_ACTION_ID } from "../../adapters/slack/render-modal.js";
import { isSlackEnvelope } from "../../adapters/slack/request-guard.js";

/** `npm test` runs a few hundred cases per property; `npm run test:chaos` sets FUZZ_RUNS=10000. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
const ASK_ID = /^[A-Za-z0-9_-]{1,100}$/;

function deeplyNested(depth: number): unknown {
  let value: unknown = "bottom";
  for (let level = 0; level < depth; level++) value = level % 2 === 0 ? [value] : { actions: value, user: value };
  return value;
}

const nastyString = fc.oneof(
  fc.string(),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: fc.integer({ min: 0, max: 0x1f }).map((code) => String.fromCharCode(code)) }),
  fc.constantFrom("__proto__", "constructor", "<!channel>", "@everyone", "'; DROP TABLE asks; --", "\u202e\u0000", "ask:", "stop:"),
  fc.integer({ min: 3000, max: 200_000 }).map((length) => "x".repeat(length)),
);
/** Wrong types, prototype keys and deep nesting, wherever a field is expected. */
const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  nastyString,
  fc.constantFrom(null, undefined, 0, -1, 1e308, Number.NaN, true, [], {}),
  fc.constant(JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}}')),
  fc.integer({ min: 50, max: 5000 }).map(deeplyNested),
  fc.anything({ maxDepth: 3, withNullPrototype: true, withObjectString: true }),
);
const idLike = fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/), nastyString);
const indexLike = fc.oneof(fc.integer({ min: 0, max: 1200 }).map(String), nastyString);
const verb = fc.constantFrom("select", "pick", "done", "cancel", "open", "continue", "opt:0", "opt:7", "opt:1000", "opt:-1", "opt:x");
/** Strings that look like Parley's action ids, and some that only nearly do. */
const actionIdLike = fc.oneof(
  fc.tuple(fc.constantFrom("ask", "stop", "ASK", ""), idLike, verb).map(([prefix, id, action]) => `${prefix}:${id}:${action}`),
  idLike.map((id) => `stop:${id}`),
  fc.tuple(fc.constantFrom("ask:", "stop:"), nastyString).map(([prefix, rest]) => prefix + rest),
  nastyString,
);
const maybe = <T>(valid: fc.Arbitrary<T>) => fc.oneof(valid, nastyValue);

const blockActionsLike = fc.record(
  {
    type: maybe(fc.constant("block_actions")),
    user: maybe(fc.record({ id: maybe(idLike) })),
    trigger_id: maybe(fc.constant("trigger-1")),
    channel: maybe(fc.record({ id: maybe(idLike) })),
    message: maybe(fc.record({ ts: maybe(fc.constant("1.0")), thread_ts: maybe(fc.constant("0.5")) })),
    actions: maybe(
      fc.array(
        fc.record({
          action_id: maybe(actionIdLike),
          value: maybe(indexLike),
          selected_option: maybe(fc.record({ value: maybe(indexLike) })),
          selected_options: maybe(fc.array(fc.record({ value: maybe(indexLike) }), { maxLength: 4 })),
        }),
        { maxLength: 3 },
      ),
    ),
    state: maybe(
      fc.record({
        values: maybe(fc.dictionary(nastyString, fc.dictionary(actionIdLike, maybe(fc.record({ selected_options: nastyValue }))))),
      }),
    ),
  },
  { requiredKeys: [] },
);

const elementLike = maybe(
  fc.record(
    { type: maybe(fc.constantFrom("plain_text_input", "checkboxes", "number_input")), value: maybe(nastyString) },
    { requiredKeys: [] },
  ),
);
const blockIdLike = fc.oneof(
  fc.constant(ANSWER_BLOCK_ID),
  fc.constantFrom("__proto__", "constructor", "host", "password").map(fieldBlockId),
  nastyString.map(fieldBlockId),
  nastyString,
);
const viewSubmissionLike = fc.record(
  {
    type: maybe(fc.constant("view_submission")),
    user: maybe(fc.record({ id: maybe(idLike) })),
    view: maybe(
      fc.record(
        {
          private_metadata: maybe(
            fc.oneof(
              idLike.map((askId) => JSON.stringify({ askId })),
              fc.constantFrom("{", '{"askId": 1}', '{"__proto__": {"askId": "x"}}', "null", "[]"),
              fc.jsonValue({ maxDepth: 6 }).map((value) => JSON.stringify(value) ?? ""),
              fc.integer({ min: 100, max: 3000 }).map((depth) => "[".repeat(depth) + "]".repeat(depth)),
            ),
          ),
          state: maybe(
            fc.record({ values: maybe(fc.dictionary(blockIdLike, fc.dictionary(fc.constantFrom(VALUE_ACTION_ID, "other"), elementLike))) }),
          ),
        },
        { requiredKeys: [] },
      ),
    ),
  },
  { requiredKeys: [] },
);

const messageEventLike = fc.record(
  {
    type: maybe(fc.constantFrom("app_mention", "message")),
    subtype: maybe(fc.constantFrom("thread_broadcast", "bot_message", "message_changed")),
    user: maybe(idLike),
    bot_id: maybe(idLike),
    text: maybe(nastyString),
    channel: maybe(idLike),
    channel_type: maybe(fc.constantFrom("im", "channel")),
    ts: maybe(fc.constant("1.0")),
    thread_ts: maybe(fc.constant("0.5")),
    team: maybe(idLike),
  },
  { requiredKeys: [] },
);

function expectNoPollution(): void {
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(Object.prototype).not.toHaveProperty("polluted");
}

describe("fuzzing Slack payloads through the pure parsers", () => {
  it("action ids: anything parses to an id Parley would draw (it round-trips) or to undefined", () => {
    fc.assert(
      fc.property(fc.oneof(actionIdLike, nastyString), (actionId) => {
        const parsed = parseActionId(actionId);
        if (parsed === undefined) return;
        const redrawn =
          parsed.kind === "stop"
            ? actionIds.stop(parsed.sessionId)
            : parsed.kind === "option"
              ? actionIds.option(parsed.askId, parsed.index)
              : actionIds[parsed.kind](parsed.askId);
        // "opt:007" reads as option 7, which Parley draws as "opt:7"; every other id comes back exactly.
        expect(parseActionId(redrawn)).toEqual(parsed);
        if (parsed.kind !== "option") expect(redrawn).toBe(actionId);
        expect(parsed.kind === "stop" ? parsed.sessionId : parsed.askId).toMatch(ASK_ID);
      }),
      { numRuns: RUNS },
    );
  });

  it("option indexes are small non-negative integers or undefined", () => {
    fc.assert(
      fc.property(fc.oneof(indexLike, fc.constant(undefined)), (value) => {
        const index = parseOptionIndex(value);
        if (index !== undefined) expect(Number.isInteger(index) && index >= 0 && index <= 999).toBe(true);
      }),
      { numRuns: RUNS },
    );
  });

  it("block_actions: never throws; a result names a well-formed ask and integer option indexes", () => {
    fc.assert(
      fc.property(fc.oneof(blockActionsLike, nastyValue), (payload) => {
        const parsed = parseBlockActions(payload);
        expectNoPollution();
        if (parsed === undefined) return;
        expect(typeof parsed.userId).toBe("string");
        const interaction = parsed.interaction;
        if (interaction.kind === "none") return;
        expect(interaction.kind === "stop" ? interaction.sessionId : interaction.askId).toMatch(ASK_ID);
        if (interaction.kind === "answer" && interaction.input.kind === "option")
          expect(Number.isInteger(interaction.input.index)).toBe(true);
        if (interaction.kind === "answer" && interaction.input.kind === "options") {
          for (const index of interaction.input.indexes) expect(Number.isInteger(index)).toBe(true);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("view_submission: never throws; a result carries a bounded ask id and plain string or boolean values", () => {
    fc.assert(
      fc.property(fc.oneof(viewSubmissionLike, nastyValue), (payload) => {
        const parsed = parseViewSubmission(payload);
        expectNoPollution();
        if (parsed === undefined) return;
        expect(parsed.askId.length).toBeGreaterThan(0);
        expect(parsed.askId.length).toBeLessThanOrEqual(100);
        if (parsed.input.kind === "text") expect(typeof parsed.input.text).toBe("string");
        if (parsed.input.kind === "form") {
          expect(Object.getPrototypeOf(parsed.input.values)).toBe(Object.prototype);
          for (const value of Object.values(parsed.input.values)) expect(["string", "boolean", "undefined"]).toContain(typeof value);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("a form field named __proto__ stays an ordinary value and pollutes nothing", () => {
    const values = { [fieldBlockId("__proto__")]: { [VALUE_ACTION_ID]: { type: "plain_text_input", value: "x" } } };
    const payload = JSON.parse(JSON.stringify({ user: { id: "U1" }, view: { private_metadata: '{"askId":"A1"}', state: { values } } }));
    const parsed = parseViewSubmission(payload);
    expect(parsed?.input).toEqual({ kind: "form", values: JSON.parse('{"__proto__": "x"}') });
    expect(parsed?.input.kind === "form" && Object.getPrototypeOf(parsed.input.values)).toBe(Object.prototype);
    expectNoPollution();
  });

  it("message events: never throw; a result has a Slack event id and single-spaced text", () => {
    fc.assert(
      fc.property(fc.oneof(messageEventLike, nastyValue), fc.option(idLike, { nil: undefined }), (event, botUserId) => {
        const parsed = parseMessageEvent(event, { teamId: "T1", botUserId });
        if (parsed === undefined) return;
        expect(parsed.eventId.startsWith("slack:")).toBe(true);
        expect(parsed.text).not.toMatch(/\s\s|^\s|\s$/);
        expect(parsed.conversation.platform).toBe("slack");
      }),
      { numRuns: RUNS },
    );
  });

  it("the request guard reads any body and content type without throwing, and refuses what Bolt cannot read", () => {
    const body = fc.oneof(
      nastyString,
      fc.jsonValue({ maxDepth: 6 }).map((value) => JSON.stringify(value) ?? ""),
      fc.jsonValue({ maxDepth: 6 }).map((value) => new URLSearchParams({ payload: JSON.stringify(value) ?? "" }).toString()),
    );
    const contentType = fc.constantFrom("application/json", "application/x-www-form-urlencoded", "text/plain", undefined);
    fc.assert(
      fc.property(body, contentType, (text, type) => {
        expect(typeof isSlackEnvelope(text, type)).toBe("boolean");
      }),
      { numRuns: RUNS },
    );
    expect(isSlackEnvelope("payload=null", "application/x-www-form-urlencoded")).toBe(false);
    expect(isSlackEnvelope('payload={"type":"block_actions"}', "application/x-www-form-urlencoded")).toBe(false);
    expect(isSlackEnvelope('payload={"type":"block_actions","user":{"id":"U1"}}', "application/x-www-form-urlencoded")).toBe(true);
    expect(isSlackEnvelope('{"type":"event_callback","event":null}', "application/json")).toBe(false);
    expect(isSlackEnvelope('{"type":"url_verification","challenge":"c"}', "application/json")).toBe(true);
    expect(isSlackEnvelope("command=%2Fparley&text=stats", "application/x-www-form-urlencoded")).toBe(true);
    expect(isSlackEnvelope("[]", "application/json")).toBe(false);
  });

  it("stored card references: any text reads back as a reference or undefined", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          nastyString,
          fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value) ?? ""),
        ),
        (text) => {
          const reference = readCardRef(text);
          if (reference) expect(reference.channel.length * reference.ts.length).toBeGreaterThan(0);
        },
      ),
      { numRuns: RUNS },
    );
  });
});
