import { hostname } from "node:os";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../../src/loop/tools.js";
import { FakeAnthropic, lastToolResults, reply, toolUse } from "../fakes/fake-anthropic.js";
import { CONVERSATION, EngineHarness, tempDatabasePath } from "../support/harness.js";

/** Two Parley processes on one database, as two engines on one SQLite file: a turn runs in one of them only. */
let fake: FakeAnthropic;
let database: ReturnType<typeof tempDatabasePath>;
let first: EngineHarness;
let second: EngineHarness | undefined;
let now: number;
let release: (() => void) | undefined;
let runs = 0;

const tools = [
  defineTool({
    name: "slow",
    description: "Waits until released.",
    hints: { readOnly: true },
    input: z.object({}),
    run: () => {
      runs++;
      return new Promise<string>((resolve) => (release = () => resolve("done")));
    },
  }),
];
const open = () => new EngineHarness(fake, database.path, { tools, clock: () => now });
const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };

beforeEach(async () => {
  now = Date.UTC(2026, 11, 1, 12);
  runs = 0;
  release = undefined;
  fake = await new FakeAnthropic().start();
  database = tempDatabasePath();
  first = open();
});

afterEach(async () => {
  release?.();
  await first.close();
  await second?.close();
  second = undefined;
  await fake.close();
  database.cleanup();
});

/** The state a crash leaves: a turn running, its assistant message asking for `slow`, and a lease held by `holder`. */
async function runningTurnHeldBy(holder: string, until: number): Promise<string> {
  const session = await first.store.createSession({ id: "S-lease", conversation: CONVERSATION, ownerId: "U_OWNER", now });
  await first.store.startTurnOrQueue(session.id, { role: "user", content: [{ type: "text", text: "go" }] }, now);
  await first.store.commitStep(session.id, {
    messages: [{ role: "assistant", content: [toolUse("slow", {}, "toolu_1")] as never }],
    usage,
    now,
  });
  first.store.db.prepare("UPDATE sessions SET lease_owner = ?, lease_until = ? WHERE id = ?").run(holder, until, session.id);
  return session.id;
}

describe("turn leases: one process runs a turn", () => {
  it("a second process starting leaves alone the turn the first one is running", async () => {
    fake.script({ content: [toolUse("slow", {})] }, reply("Finished."));
    const said = first.say("work slowly");
    while (!release) await new Promise((resolve) => setTimeout(resolve, 5));
    second = open();
    await second.engine.recover();
    await second.engine.idle();
    // The second start neither ran the tool again nor called the model for that turn.
    expect(runs).toBe(1);
    expect(fake.requests).toHaveLength(1);
    release();
    await said;
    await first.engine.idle();
    expect(lastToolResults(fake.requests.at(-1))[0]).toMatchObject({ content: "done" });
    expect(first.adapter.messages.at(-1)?.text).toBe("Finished.");
  });

  it("a holder on this host whose process is gone is taken over at once", async () => {
    await runningTurnHeldBy(`${hostname()}:999999:gone`, now + 30_000);
    fake.script(reply("Recovered."));
    second = open();
    await second.engine.recover();
    while (!release) await new Promise((resolve) => setTimeout(resolve, 5));
    release();
    await second.engine.idle();
    expect(runs).toBe(1);
    expect(second.adapter.messages.at(-1)?.text).toBe("Recovered.");
  });

  it("a holder on another host keeps its lease until it expires; then the sweeper takes the turn over", async () => {
    await runningTurnHeldBy("elsewhere:1234:live", now + 30_000);
    fake.script(reply("Taken over."));
    second = open();
    await second.engine.recover();
    await second.engine.idle();
    expect(runs).toBe(0);
    expect(fake.requests).toHaveLength(0);
    now += 31_000;
    await second.engine.sweep();
    while (!release) await new Promise((resolve) => setTimeout(resolve, 5));
    release();
    await second.engine.idle();
    expect(runs).toBe(1);
    expect(second.adapter.messages.at(-1)?.text).toBe("Taken over.");
  });
});
