import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { renderRichText } from "../../src/ports/rich-text.js";
import { ask, FakeAnthropic, reply } from "../fakes/fake-anthropic.js";
import { RECORDED_DIALECT } from "../fakes/recording-adapter.js";
import { EngineHarness, OWNER, tempDatabasePath } from "../support/harness.js";

let fake: FakeAnthropic;
let database: ReturnType<typeof tempDatabasePath>;
let harness: EngineHarness;
let now: number;

beforeEach(async () => {
  now = Date.UTC(2026, 11, 1, 12);
  fake = await new FakeAnthropic().start();
  database = tempDatabasePath();
  harness = new EngineHarness(fake, database.path, { clock: () => now });
});

afterEach(async () => {
  await harness.close();
  await fake.close();
  database.cleanup();
});

const shown = () => harness.adapter.progress.map((view) => ({ text: renderRichText(view.text, RECORDED_DIALECT), done: view.done }));

/** Runs a turn whose one model step takes 1.2 s (so its status line shows), moving the engine's clock `ageMs` on. */
async function slowStep(ageMs: number, ...turns: Parameters<FakeAnthropic["script"]>): Promise<void> {
  fake.delayMs = 1200;
  fake.script(...turns);
  const aged = setTimeout(() => (now += ageMs), 300);
  await harness.say("go");
  await harness.engine.idle();
  clearTimeout(aged);
}

describe("the status line gives its place to what the turn says next", () => {
  it("a slow step's card takes the status line's place: no edit of its own, nothing left showing Thinking…", async () => {
    await slowStep(5_000, ask({ type: "confirm", question: "Ship?" }));
    expect(shown()).toEqual([{ text: "Thinking…", done: false }]);
    const turnKey = harness.adapter.progress[0]!.turnKey;
    expect(harness.adapter.cardOptions).toEqual([{ inPlaceOf: turnKey }]);
  });

  it("a slow step's answer takes it too", async () => {
    await slowStep(5_000, reply("Shipped."));
    expect(shown()).toEqual([{ text: "Thinking…", done: false }]);
    expect(harness.adapter.messages.at(-1)).toMatchObject({
      text: "Shipped.",
      options: { inPlaceOf: harness.adapter.progress[0]!.turnKey },
    });
  });

  it("after a run of a minute the card is posted on its own, so that it notifies, and the status line ends", async () => {
    await slowStep(61_000, ask({ type: "confirm", question: "Ship?" }));
    expect(shown()).toEqual([
      { text: "Thinking…", done: false },
      { text: `Asked <@${OWNER.id}>`, done: true },
    ]);
    expect(harness.adapter.cardOptions).toEqual([{}]);
  });

  it("after a run of a minute the answer is posted on its own, and the status line says Done", async () => {
    await slowStep(61_000, reply("Shipped."));
    expect(shown().at(-1)).toEqual({ text: "Done", done: true });
    expect(harness.adapter.messages.at(-1)?.options?.inPlaceOf).toBeUndefined();
  });
});
