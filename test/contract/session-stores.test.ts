import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { SETTLED_MARK_DELAY_MS } from "../../db/sqlite-hot-path.js";
import { SqliteSessionStore } from "../../db/sqlite-session-store.js";
import { parseAskSpec } from "../../src/ask/spec.js";
import { ZERO_USAGE } from "../../src/ports/model-client.js";
import { MemorySessionStore } from "../../src/store/memory-session-store.js";
import { tempDatabasePath } from "../support/harness.js";
import { apiStoreContract } from "./api-store.contract.js";
import { sessionStoreContract } from "./session-store.contract.js";

const MIGRATIONS = join(import.meta.dirname, "../../db/migrations");

const openMemory = async () => ({ store: new MemorySessionStore(), cleanup: async () => {} });

const openSqlite = async () => {
  const database = tempDatabasePath();
  const store = new SqliteSessionStore(database.path);
  return {
    store,
    cleanup: async () => {
      await store.close();
      database.cleanup();
    },
  };
};

sessionStoreContract("memory", openMemory);
sessionStoreContract("sqlite", openSqlite);
apiStoreContract("memory", openMemory);
apiStoreContract("sqlite", openSqlite);

describe("SqliteSessionStore specifics", () => {
  it("writes a settled mark with the next write transaction, alone within a second of none, and at close", async () => {
    const database = tempDatabasePath();
    let store = new SqliteSessionStore(database.path);
    const parsed = parseAskSpec({ type: "confirm", question: "Q?" }, 60);
    if (!parsed.ok) throw new Error(parsed.error);
    const endedAsk = async (index: number) => {
      const conversation = { platform: "slack" as const, workspace: "T", channel: "C", thread: `t${index}` };
      const session = await store.createSession({ id: `S${index}`, conversation, ownerId: "U", now: 1 });
      await store.startTurnOrQueue(session.id, { role: "user", content: [{ type: "text", text: "hi" }] }, 2);
      const ask = { id: `A${index}`, toolUseId: "toolu_1", spec: parsed.spec, siblingResults: [], deadline: 1000 };
      await store.commitStep(session.id, { messages: [], usage: ZERO_USAGE, ask, now: 3 });
      await store.setCardRef(ask.id, "card", 1000);
      const audit = { actor: "U", action: "ask-cancelled", target: ask.id, outcome: "cancelled", at: 4 };
      const resolution = { status: "cancelled" as const, answer: null, answeredBy: "U", resultMessage: null, audit, now: 4 };
      await store.resolveAsk(ask.id, { ...resolution, sessionStatus: "idle" });
      return ask.id;
    };
    const settledAt = (askId: string) =>
      (store.db.prepare("SELECT settled_at FROM asks WHERE id = ?").get(askId) as { settled_at: number | null }).settled_at;

    // With the next write: no commit of its own.
    const first = await endedAsk(1);
    await store.recordCardSettled(first, 5);
    expect(settledAt(first)).toBeNull();
    await endedAsk(2);
    expect(settledAt(first)).toBe(5);
    // Alone, when no write comes within the second.
    await store.recordCardSettled("A2", 6);
    await new Promise((resolve) => setTimeout(resolve, SETTLED_MARK_DELAY_MS + 300));
    expect(settledAt("A2")).toBe(6);
    // At close.
    const third = await endedAsk(3);
    await store.recordCardSettled(third, 7);
    await store.close();
    store = new SqliteSessionStore(database.path);
    expect(settledAt(third)).toBe(7);
    expect(await store.listUnsettledAsks(0, 10)).toEqual([]);
    await store.close();
    database.cleanup();
  });

  it("opens in WAL with synchronous=NORMAL and passes integrity_check", async () => {
    const database = tempDatabasePath();
    const store = new SqliteSessionStore(database.path);
    expect(store.db.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(store.db.pragma("synchronous", { simple: true })).toBe(1);
    expect(store.db.pragma("integrity_check", { simple: true })).toBe("ok");
    await store.close();
    database.cleanup();
  });

  it("copies the WAL into the database file from its own thread, with no commit paying for it", async () => {
    const write = async (checkpoints: "worker" | "on-commit") => {
      const database = tempDatabasePath();
      const store = new SqliteSessionStore(database.path, { checkpoints });
      const conversation = { platform: "slack" as const, workspace: "w", channel: "c", thread: "1" };
      const session = await store.createSession({ id: "S", conversation, ownerId: "U", now: 1 });
      await store.startTurnOrQueue(session.id, { role: "user", content: [{ type: "text", text: "x" }] }, 1);
      const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
      // About 800 KB in all: fewer WAL frames than SQLite's own 1,000-frame checkpoint on commit.
      const message = { role: "assistant" as const, content: [{ type: "text" as const, text: "y".repeat(20_000) }] };
      for (let index = 0; index < 40; index++) await store.commitStep(session.id, { messages: [message], usage, now: 2 });
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const fileBytes = statSync(database.path).size;
      await store.close();
      database.cleanup();
      return fileBytes;
    };
    // Left to SQLite, every page is still in the WAL only; the worker has copied them within a second.
    expect(await write("on-commit")).toBeLessThan(100_000);
    expect(await write("worker")).toBeGreaterThan(800_000);
  });

  it("a suspend writes only the new messages, whatever the history length", async () => {
    const database = tempDatabasePath();
    const store = new SqliteSessionStore(database.path);
    const session = await store.createSession({
      id: "S",
      conversation: { platform: "slack" as const, workspace: "w", channel: "c", thread: "1" },
      ownerId: "U",
      now: 1,
    });
    await store.startTurnOrQueue(session.id, { role: "user", content: [{ type: "text", text: "x" }] }, 1);
    const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
    const message = { role: "assistant" as const, content: [{ type: "text" as const, text: "y".repeat(500) }] };
    for (let index = 0; index < 200; index++) await store.commitStep(session.id, { messages: [message], usage, now: 2 });
    const before = store.db.prepare("SELECT total_changes() AS changes").get() as { changes: number };
    await store.commitStep(session.id, { messages: [message], usage, now: 3 });
    const after = store.db.prepare("SELECT total_changes() AS changes").get() as { changes: number };
    // One message row plus the session row: the 201 earlier messages are not rewritten.
    expect(after.changes - before.changes).toBe(2);
    await store.close();
    database.cleanup();
  });

  it("refuses a row of an unknown schema version instead of guessing", async () => {
    const database = tempDatabasePath();
    const store = new SqliteSessionStore(database.path);
    await store.createSession({
      id: "S",
      conversation: { platform: "slack" as const, workspace: "w", channel: "c", thread: "1" },
      ownerId: "U",
      now: 1,
    });
    await store.close();
    const raw = new Database(database.path);
    raw.prepare("UPDATE sessions SET v = 99").run();
    raw.close();
    const reopened = new SqliteSessionStore(database.path);
    await expect(reopened.getSession("S")).rejects.toMatchObject({ code: "unknown-schema-version" });
    await reopened.close();
    database.cleanup();
  });

  it("migrates a database made before settles were recorded: old endings count as settled, the last hour's do not", async () => {
    const database = tempDatabasePath();
    const raw = new Database(database.path);
    for (const name of ["001_init.sql", "002_tool_calls.sql"]) raw.exec(readFileSync(join(MIGRATIONS, name), "utf8"));
    raw.pragma("user_version = 2");
    raw
      .prepare(
        `INSERT INTO sessions (id, v, conversation_key, platform, workspace, channel, thread, owner_id, status, created_at, updated_at)
         VALUES ('S', 1, 'slack:w:c:1', 'slack', 'w', 'c', '1', 'U', 'idle', 1, 1)`,
      )
      .run();
    const now = Date.now();
    const insertAsk = raw.prepare(
      `INSERT INTO asks (id, v, session_id, tool_use_id, spec, status, sibling_results, card_ref, deadline, created_at, ended_at)
       VALUES (?, 1, 'S', ?, '{}', 'answered', '[]', 'card', 0, 0, ?)`,
    );
    insertAsk.run("old", "toolu_old", now - 2 * 60 * 60 * 1000);
    insertAsk.run("recent", "toolu_recent", now - 60 * 1000);
    raw.close();
    const store = new SqliteSessionStore(database.path);
    // Every migration ran, up to the newest.
    expect(store.db.pragma("user_version", { simple: true })).toBe(readdirSync(MIGRATIONS).filter((name) => name.endsWith(".sql")).length);
    const unsettled = store.db.prepare("SELECT id FROM asks WHERE settled_at IS NULL ORDER BY id").all();
    expect(unsettled).toEqual([{ id: "recent" }]);
    await store.close();
    database.cleanup();
  });
});
