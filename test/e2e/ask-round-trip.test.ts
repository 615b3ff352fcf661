import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ask, FakeAnthropic, lastToolResults, reply } from "../fakes/fake-anthropic.js";
import { EngineHarness, OWNER, tempDatabasePath } from "../support/harness.js";

let fake: FakeAnthropic;
let database: ReturnType<typeof tempDatabasePath>;
let harness: EngineHarness;

beforeEach(async () => {
  fake = await new FakeAnthropic().start();
  database = tempDatabasePath();
  harness = new EngineHarness(fake, database.path);
});

afterEach(async () => {
  await harness.close();
  await fake.close();
  database.cleanup();
});

function resultOfLastRequest() {
  const results = lastToolResults(fake.requests.at(-1));
  expect(results).toHaveLength(1);
  return { ...results[0]!, parsed: JSON.parse(results[0]!.content) as unknown };
}

describe("ask_user round trip through the real SDK", () => {
  it("answers a candidates question with a tapped option, then posts the final answer", async () => {
    fake.script(ask({ question: "Which environment?", candidates: ["staging", "production"] }), reply("Deploying to production."));
    expect(await harness.say("deploy the app")).toBe("started");
    const card = harness.lastCard();
    expect(card.spec.options.map((option) => option.label)).toEqual(["staging", "production"]);

    const outcome = await harness.engine.answer(card.askId, OWNER, { kind: "option", index: 1 });
    expect(outcome).toEqual({ kind: "accepted" });
    await harness.engine.idle();

    expect(resultOfLastRequest().parsed).toEqual({ ok: true, value: "production" });
    expect(harness.adapter.messages.at(-1)?.text).toBe("Deploying to production.");
    expect(harness.adapter.settled.at(-1)?.settlement).toMatchObject({ status: "answered", answerText: "production", by: OWNER.id });
  });
});
