import { ApplicationCommandOptionType } from "discord.js";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AnswerDrafts } from "../../adapters/discord/answer-drafts.js";
import { componentId, modalId, parseComponentId, parseModalId } from "../../adapters/discord/custom-id.js";
import { commandLine } from "../../adapters/discord/parley-command.js";
import { actorFrom, conversationFrom, type InteractionFacts } from "../../adapters/discord/parse-actor.js";
import { type MessageFacts, routeMessage } from "../../adapters/discord/parse-message.js";
import { readModalValues } from "../../adapters/discord/render-modal.js";

/** `npm test` runs a few hundred cases per property; `npm run test:chaos` sets FUZZ_RUNS=10000. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
const ID = /^[A-Za-z0-9_-]{1,64}$/;
const BOT = "999000111";

const nastyString = fc.oneof(
  fc.string(),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: fc.integer({ min: 0, max: 0x1f }).map((code) => String.fromCharCode(code)) }),
  fc.constantFrom(
    "__proto__",
    "constructor",
    "@everyone",
    "@here",
    `<@${BOT}>`,
    `<@!${BOT}>`,
    "<@&123>",
    "'; DROP TABLE asks; --",
    "\u202e",
  ),
  fc.integer({ min: 2000, max: 100_000 }).map((length) => "x".repeat(length)),
);
const idLike = fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/), nastyString);
const indexLike = fc.oneof(fc.integer({ min: 0, max: 1200 }).map(String), fc.constantFrom("007", "-1", "1e2", ""), nastyString);
const verb = fc.constantFrom("opt", "pick", "multi", "done", "cancel", "continue", "open", "other", "part", "text", "frob");
/** Custom ids that look like Parley's, and some that only nearly do. */
const customIdLike = fc.oneof(
  fc
    .tuple(fc.constantFrom("ask", "modal", "stop", ""), idLike, verb, fc.option(indexLike), fc.option(nastyString))
    .map(([prefix, id, action, index, extra]) => [prefix, id, action, index, extra].filter((part) => part !== null).join(":")),
  idLike.map((id) => `stop:${id}`),
  nastyString,
);

function expectNoPollution(): void {
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(Object.prototype).not.toHaveProperty("polluted");
}

describe("fuzzing Discord payloads through the pure parsers", () => {
  it("component ids parse to an action Parley would draw (it parses back the same) or to undefined", () => {
    fc.assert(
      fc.property(customIdLike, (customId) => {
        const action = parseComponentId(customId);
        if (action === undefined) return;
        expect(parseComponentId(componentId(action))).toEqual(action);
        expect(action.kind === "stop" ? action.sessionId : action.askId).toMatch(ID);
        if (action.kind === "option") expect(Number.isInteger(action.index) && action.index <= 999).toBe(true);
        expect(componentId(action).length).toBeLessThanOrEqual(100);
      }),
      { numRuns: RUNS },
    );
  });

  it("modal ids parse to a target Parley would draw or to undefined", () => {
    fc.assert(
      fc.property(customIdLike, (customId) => {
        const target = parseModalId(customId);
        if (target === undefined) return;
        expect(parseModalId(modalId(target))).toEqual(target);
        expect(target.askId).toMatch(ID);
      }),
      { numRuns: RUNS },
    );
  });

  it("gateway messages route to ignore, the engine or a new thread; never throw; thread names fit", () => {
    const facts: fc.Arbitrary<MessageFacts> = fc.record({
      id: idLike,
      channelId: idLike,
      guildId: fc.option(idLike),
      channelKind: fc.constantFrom("dm", "thread", "text", "other"),
      parentId: fc.option(idLike),
      author: fc.record(
        { id: fc.oneof(idLike, fc.constant(BOT)), name: nastyString, isBot: fc.boolean(), isAdmin: fc.boolean() },
        { requiredKeys: ["id", "isBot"] },
      ),
      content: fc.oneof(
        nastyString,
        nastyString.map((text) => `<@${BOT}> ${text} <@!${BOT}>`),
      ),
      mentionsBot: fc.boolean(),
      repliesToBot: fc.boolean(),
    });
    fc.assert(
      fc.property(facts, (message) => {
        const route = routeMessage(message, BOT);
        if (route.route === "ignore") return;
        expect(route.message.eventId).toBe(`discord:message:${message.id}`);
        expect(route.message.text).not.toContain(`<@${BOT}>`);
        expect(route.message.author.isAdmin).toBe(message.author.isAdmin === true);
        expect(message.author.isBot || message.author.id === BOT).toBe(false);
        if (route.route === "start-thread") {
          expect(route.threadName.length).toBeGreaterThan(0);
          expect(Array.from(route.threadName).length).toBeLessThanOrEqual(80);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("interaction facts give admin only from Manage Server, and a conversation only for a thread or a DM", () => {
    const facts: fc.Arbitrary<InteractionFacts> = fc.record({
      userId: idLike,
      name: nastyString,
      hasManageGuild: fc.boolean(),
      guildId: fc.option(idLike),
      channelId: fc.option(idLike),
      channelKind: fc.constantFrom("dm", "thread", "text", "other"),
      parentId: fc.option(idLike),
    });
    fc.assert(
      fc.property(facts, (interaction) => {
        expect(actorFrom(interaction).isAdmin).toBe(interaction.hasManageGuild);
        const conversation = conversationFrom(interaction);
        if (conversation) expect(["dm", "thread"]).toContain(interaction.channelKind);
      }),
      { numRuns: RUNS },
    );
  });

  it("modal submissions read into plain string or boolean values; no field name reaches a prototype", () => {
    const component = fc.record(
      {
        customId: fc.oneof(
          customIdLike,
          nastyString.map((name) => `field:${name}`),
          fc.constantFrom("field:__proto__", "field:constructor", "answer"),
        ),
        value: fc.option(nastyString),
        values: fc.array(nastyString, { maxLength: 3 }),
      },
      { requiredKeys: ["customId"] },
    );
    fc.assert(
      fc.property(fc.array(component, { maxLength: 8 }), (components) => {
        const read = readModalValues(components);
        const drafts = new AnswerDrafts();
        const merged = drafts.mergeForm("ask1", "user1", read.values);
        expectNoPollution();
        for (const value of Object.values(merged)) expect(["string", "boolean"]).toContain(typeof value);
        if (read.text !== undefined) expect(typeof read.text).toBe("string");
      }),
      { numRuns: RUNS },
    );
  });

  it("a form field named __proto__ stays an ordinary value", () => {
    const read = readModalValues([{ customId: "field:__proto__", value: "x" }]);
    expect(Object.getPrototypeOf(read.values)).toBe(Object.prototype);
    expect(Object.keys(read.values)).toEqual(["__proto__"]);
    expectNoPollution();
  });

  it("slash command options of any shape and depth join into a line without throwing", () => {
    type Option = { name: string; type: number; value?: unknown; options?: Option[] };
    const leaf: fc.Arbitrary<Option> = fc.record(
      {
        name: nastyString,
        type: fc.integer({ min: 0, max: 12 }),
        value: fc.oneof(nastyString, fc.integer(), fc.boolean(), fc.constant(null)),
      },
      { requiredKeys: ["name", "type"] },
    );
    const tree = fc.letrec<{ node: Option }>((tie) => ({
      node: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        leaf,
        fc.record({
          name: nastyString,
          type: fc.constantFrom(ApplicationCommandOptionType.Subcommand, ApplicationCommandOptionType.SubcommandGroup),
          options: fc.array(tie("node"), { maxLength: 3 }),
        }),
      ),
    })).node;
    fc.assert(
      fc.property(fc.array(tree, { maxLength: 4 }), (options) => {
        expect(typeof commandLine(options)).toBe("string");
      }),
      { numRuns: RUNS },
    );
  });
});
