import { spawn } from "node:child_process";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { AnthropicModelClient } from "../../adapters/anthropic/anthropic-model-client.js";
import { SqliteSessionStore } from "../../db/sqlite-session-store.js";
import { Engine } from "../../src/engine/engine.js";
import { createRuntimeSettings } from "../../src/engine/settings.js";
import { SILENT_LOGGER } from "../../src/logger.js";
import { ask, lastToolResults, reply, text } from "../fakes/fake-anthropic.js";
import { RecordingAdapter } from "../fakes/recording-adapter.js";
import { CONVERSATION, freshHarnessPerTest, OWNER } from "../support/harness.js";

const setup = freshHarnessPerTest();

/** A second bot process on the same setup.database file: its own connection, engine and adapter. */
function secondEngine(busyTimeoutMs?: number) {
  const store = new SqliteSessionStore(setup.database.path, busyTimeoutMs === undefined ? {} : { busyTimeoutMs });
  const adapter = new RecordingAdapter();
  const engine = new Engine({
    store,
    model: new AnthropicModelClient({ apiKey: "k", model: "claude-sonnet-5-5", baseURL: setup.fake.url, maxRetries: 0 }),
    adapters: [adapter],
    logger: SILENT_LOGGER,
    settings: createRuntimeSettings(),
  });
  return { store, adapter, engine };
}

describe("two engines sharing one database file", () => {
  it("claims stay exactly-once: concurrent taps through both engines resume once", async () => {
    setup.fake.script(ask({ type: "confirm", question: "Deploy?" }), reply("Deployed."));
    await setup.harness.say("deploy");
    const askId = setup.harness.lastCard().askId;
    const other = secondEngine();
    const outcomes = await Promise.all([
      ...Array.from({ length: 5 }, () => setup.harness.engine.answer(askId, OWNER, { kind: "option", index: 0 })),
      ...Array.from({ length: 5 }, () => other.engine.answer(askId, OWNER, { kind: "option", index: 1 })),
    ]);
    await Promise.all([setup.harness.engine.idle(), other.engine.idle()]);
    expect(outcomes.filter((outcome) => outcome.kind === "accepted")).toHaveLength(1);
    expect(setup.fake.requests).toHaveLength(2);
    expect([...setup.harness.adapter.messages, ...other.adapter.messages].map((message) => message.text)).toEqual(["Deployed."]);
    await other.store.close();
  });

  it("a write lock held by another process is waited out (busy timeout), never a crash", async () => {
    setup.fake.script(ask({ type: "confirm", question: "Go?" }), reply("Went."));
    await setup.harness.say("go");
    // better-sqlite3 waits synchronously, so the lock must be held by another process, as in production.
    const blocker = spawn(
      process.execPath,
      [
        "-e",
        `const d = new (require("better-sqlite3"))(${JSON.stringify(setup.database.path)}); d.exec("BEGIN IMMEDIATE"); console.log("locked"); setTimeout(() => d.exec("COMMIT"), 300);`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    await new Promise((resolve) => blocker.stdout.once("data", resolve));
    const answer = setup.harness.engine.answer(setup.harness.lastCard().askId, OWNER, { kind: "option", index: 0 });
    expect(await answer).toEqual({ kind: "accepted" });
    await setup.harness.engine.idle();
    expect(setup.harness.adapter.messages.at(-1)?.text).toBe("Went.");
    await new Promise((resolve) => (blocker.exitCode === null ? blocker.once("exit", resolve) : resolve(null)));
  });

  it("a lock held past the timeout is a clear error that changes nothing, and the same tap works once it clears", async () => {
    setup.fake.script(ask({ type: "confirm", question: "Go?" }), reply("Went."));
    await setup.harness.say("go");
    const askId = setup.harness.lastCard().askId;
    const other = secondEngine(100);
    const blocker = new Database(setup.database.path);
    blocker.exec("BEGIN IMMEDIATE");
    await expect(other.engine.answer(askId, OWNER, { kind: "option", index: 0 })).rejects.toMatchObject({
      code: "storage-busy",
      message: expect.stringContaining("database is locked"),
    });
    blocker.exec("ROLLBACK");
    blocker.close();
    expect((await setup.harness.store.getAsk(askId))?.status).toBe("pending");
    expect(await other.engine.answer(askId, OWNER, { kind: "option", index: 0 })).toEqual({ kind: "accepted" });
    await other.engine.idle();
    expect(JSON.parse(lastToolResults(setup.fake.requests.at(-1))[0]!.content)).toEqual({ ok: true, value: true });
    await other.store.close();
  });
});

describe("disk full", () => {
  it("a turn that cannot be saved says so, corrupts nothing, and carries on once there is room", async () => {
    const big = "x".repeat(64 * 1024);
    setup.fake.script({ content: [text(big)], delayMs: 100 }, reply("Saved at last."));
    const pages = setup.harness.store.db.pragma("page_count", { simple: true }) as number;
    const message = { eventId: "E-full", conversation: CONVERSATION, author: OWNER, text: "write a long essay", addressedToBot: true };
    expect(await setup.harness.engine.handleMessage(message)).toBe("started");
    // Out of room from now on: SQLite refuses to grow the file, as on a full disk.
    setup.harness.store.db.pragma(`max_page_count = ${pages + 2}`);
    await setup.harness.engine.idle();
    expect(setup.harness.adapter.messages.at(-1)?.text).toContain("Parley cannot save this turn right now (the disk is full)");
    expect((await setup.harness.store.findSession(CONVERSATION))?.status).toBe("running");
    expect(setup.harness.store.db.pragma("integrity_check", { simple: true })).toBe("ok");

    setup.harness.store.db.pragma("max_page_count = 1073741823");
    await setup.harness.engine.sweep();
    await setup.harness.engine.idle();
    expect(setup.harness.adapter.messages.at(-1)?.text).toBe("Saved at last.");
    expect((await setup.harness.store.findSession(CONVERSATION))?.status).toBe("idle");
    expect(setup.harness.store.db.pragma("integrity_check", { simple: true })).toBe("ok");
  });
});

describe("housekeeping", () => {
  it("forgets processed event ids after a day, but not before", async () => {
    await setup.harness.store.claimEvent("old", 0);
    await setup.harness.store.claimEvent("new", Date.now());
    expect(await setup.harness.store.pruneEvents(Date.now() - 24 * 60 * 60 * 1000)).toBe(1);
    expect(await setup.harness.store.claimEvent("new", Date.now())).toBe(false);
    expect(await setup.harness.store.claimEvent("old", Date.now())).toBe(true);
  });
});
