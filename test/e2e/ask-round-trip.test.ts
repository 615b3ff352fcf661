import { describe, expect, it } from "vitest";
import { ask, lastToolResults, reply } from "../fakes/fake-anthropic.js";
import { freshHarnessPerTest, OWNER } from "../support/harness.js";

const setup = freshHarnessPerTest();

function resultOfLastRequest() {
  const results = lastToolResults(setup.fake.requests.at(-1));
  expect(results).toHaveLength(1);
  return { ...results[0]!, parsed: JSON.parse(results[0]!.content) as unknown };
}

describe("ask_user round trip through the real SDK", () => {
  it("answers a candidates question with a tapped option, then posts the final answer", async () => {
    setup.fake.script(ask({ question: "Which environment?", candidates: ["staging", "production"] }), reply("Deploying to production."));
    expect(await setup.harness.say("deploy the app")).toBe("started");
    const card = setup.harness.lastCard();
    expect(card.spec.options.map((option) => option.label)).toEqual(["staging", "production"]);

    const outcome = await setup.harness.engine.answer(card.askId, OWNER, { kind: "option", index: 1 });
    expect(outcome).toEqual({ kind: "accepted" });
    await setup.harness.engine.idle();

    expect(resultOfLastRequest().parsed).toEqual({ ok: true, value: "production" });
    expect(setup.harness.adapter.messages.at(-1)?.text).toBe("Deploying to production.");
    expect(setup.harness.adapter.settled.at(-1)?.settlement).toMatchObject({ status: "answered", answerText: "production", by: OWNER.id });
  });
});
