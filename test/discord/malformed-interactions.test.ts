import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ask, reply } from "../fakes/fake-anthropic.js";
import { ALICE, BOB, componentWith, customIds, DiscordHarness } from "./discord-harness.js";

type Json = Record<string, unknown>;

/** End-to-end cases cost a gateway round trip each: a tenth of FUZZ_RUNS, at most 100. */
const RUNS = Math.min(100, Math.max(10, Math.floor(Number(process.env.FUZZ_RUNS ?? 300) / 10)));

let harness: DiscordHarness;
let thread: string;
let card: Json;
let askId: string;

beforeEach(async () => {
  harness = await new DiscordHarness().start();
  harness.anthropic.script(ask({ type: "buttons", question: "Ship it?", options: ["ship", "wait"] }), reply("Done here."));
  thread = await harness.mention(ALICE, "release");
  card = await harness.card(thread);
  askId = componentWith(card, /:opt:0$/).custom_id.split(":")[1]!;
});

afterEach(async () => {
  await harness.close();
});

/** Every interaction was answered, and none reached the model, settled the card or answered the ask. */
async function expectAnsweredAndUnchanged(interactionIds: string[]): Promise<void> {
  for (const id of interactionIds) await harness.discord.callbackOf(id);
  await harness.quiet();
  expect(harness.anthropic.requests).toHaveLength(1);
  expect((await harness.store.getAsk(askId))?.status).toBe("pending");
  expect(customIds(harness.discord.message(String(card.id))!)).toEqual(customIds(card));
}

/** The card still works afterwards: the owner's tap resumes the model. */
async function expectStillServing(): Promise<void> {
  harness.discord.click(ALICE, card, componentWith(card, /:opt:1$/).custom_id);
  await harness.botSays(thread, /Done here\./);
  expect(harness.anthropic.requests).toHaveLength(2);
}

describe("malformed Discord interactions", () => {
  it("unknown custom ids, unknown asks, bad indexes and stray modals get an answer and change nothing", async () => {
    const taps = [
      "not-a-parley-button",
      "ask:NoSuchAsk123:opt:0",
      "ask:NoSuchAsk123:open",
      "ask:NoSuchAsk123:other",
      `ask:${askId}:opt:99`,
      `ask:${askId}:opt:007x`,
      `ask:${askId}:frobnicate`,
      `ask:${askId}:part:3`,
      "stop:NoSuchSession",
      `ask:__proto__:opt:0`,
      `ask:${"x".repeat(90)}:opt:0`,
    ].map((customId) => harness.discord.click(ALICE, card, customId));
    const picks = [["9"], ["-1"], ["abc"], []].map((values) => harness.discord.choose(ALICE, card, `ask:${askId}:pick:0`, values));
    const source = taps[0]!;
    const modals = ["modal:NoSuchAsk123:text", `modal:${askId}:part:7`, "modal:garbage", `modal:${askId}:text:extra`].map((customId) =>
      harness.discord.submitModal(ALICE, { interactionId: source, data: { custom_id: customId, components: [] } }, {}),
    );
    await expectAnsweredAndUnchanged([...taps, ...picks, ...modals]);
    await expectStillServing();
  });

  it("fuzzed near-valid taps and selects from a member who may not answer change nothing", async () => {
    const nasty = fc.oneof(
      fc.string(),
      fc.constantFrom("__proto__", "@everyone", "'; DROP TABLE asks; --", askId, "0", "1", "\u0000"),
      fc.integer({ min: 0, max: 2000 }).map(String),
    );
    const customId = fc.oneof(
      fc.constantFrom(...customIds(card)),
      fc
        .tuple(fc.constantFrom("opt", "pick", "multi", "done", "open", "other", "cancel"), nasty)
        .map(([verb, tail]) => `ask:${askId}:${verb}:${tail}`),
      nasty.map((text) => text.slice(0, 100)),
    );
    const interaction = fc.record({ customId, values: fc.option(fc.array(nasty, { maxLength: 3 })) });
    const ids = fc
      .sample(interaction, RUNS)
      .map((entry) =>
        entry.values === null
          ? harness.discord.click(BOB, card, entry.customId || "empty")
          : harness.discord.choose(BOB, card, entry.customId || "empty", entry.values),
      );
    await expectAnsweredAndUnchanged(ids);
    await expectStillServing();
  });
});
