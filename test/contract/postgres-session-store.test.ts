import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { loadMigrations } from "../../db/postgres/migrate.js";
import { PostgresSessionStore, type PostgresStoreOptions } from "../../db/postgres/postgres-session-store.js";
import { parseAskSpec } from "../../src/ask/spec.js";
import type { NewExternalAsk } from "../../src/ports/api-store.js";
import type { Storage } from "../../src/ports/maintenance-store.js";
import type { ChatMessage } from "../../src/ports/model-client.js";
import type { AskResolution } from "../../src/ports/session-store.js";
import type { StoreChange } from "../../src/ports/store-changes.js";
import { MemorySessionStore } from "../../src/store/memory-session-store.js";
import { apiStoreContract } from "./api-store.contract.js";
import { sessionStoreContract } from "./session-store.contract.js";

// CI starts PostgreSQL before the tests; a missing server fails this file, it never skips it.
const DATABASE_URL = process.env.PARLEY_TEST_DATABASE_URL ?? "postgres://root@127.0.0.1:5432/test";
const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
admin.on("error", () => {});

function redacted(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, "//$1:***@");
}

// Checked while the file loads, so an unreachable server fails the file outright instead of showing skipped tests.
try {
  await admin.query("SELECT 1");
} catch (error) {
  await admin.end();
  throw new Error(
    `PostgreSQL is not reachable at ${redacted(DATABASE_URL)} (${(error as Error).message}). ` +
      "Start it (pg_ctlcluster --skip-systemctl-redirect <version> main start) or set PARLEY_TEST_DATABASE_URL.",
  );
}

afterAll(() => admin.end());

const freshSchema = () => `parley_test_${randomUUID().replaceAll("-", "").slice(0, 16)}`;
const dropSchema = (schema: string) => admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);

/** Stores sharing one fresh schema, as several Parley processes share one database; dropped afterwards. */
async function withStores(
  count: number,
  test: (stores: PostgresSessionStore[], schema: string) => Promise<void>,
  options: PostgresStoreOptions = {},
) {
  const schema = freshSchema();
  const stores: PostgresSessionStore[] = [];
  try {
    for (let index = 0; index < count; index++) stores.push(await PostgresSessionStore.open(DATABASE_URL, { ...options, schema }));
    await test(stores, schema);
  } finally {
    await Promise.all(stores.map((store) => store.close()));
    await dropSchema(schema);
  }
}

/** One store on a fresh schema, dropped on cleanup: the factory of the contract suites. */
async function openPostgres() {
  const schema = freshSchema();
  const store = await PostgresSessionStore.open(DATABASE_URL, { schema });
  return {
    store,
    cleanup: async () => {
      await store.close();
      await dropSchema(schema);
    },
  };
}

sessionStoreContract("postgres", openPostgres);
apiStoreContract("postgres", openPostgres);

const USAGE = { inputTokens: 10, outputTokens: 5, cacheReadTokens: 1, cacheWriteTokens: 2 };
const user = (text: string): ChatMessage => ({ role: "user", content: [{ type: "text", text }] });
const spec = (() => {
  const result = parseAskSpec({ type: "confirm", question: "Q?" }, 60);
  if (!result.ok) throw new Error(result.error);
  return result.spec;
})();
const conversation = (thread: string) => ({ platform: "slack" as const, workspace: "T1", channel: "C1", thread });

/** A session suspended on ask `askId`, its card posted. */
async function suspend(store: Storage, sessionId: string, askId: string, now = 3) {
  await store.createSession({ id: sessionId, conversation: conversation(sessionId), ownerId: "U1", now: 1 });
  await store.startTurnOrQueue(sessionId, user("hi"), 2);
  await store.commitStep(sessionId, {
    messages: [{ role: "assistant", content: [{ type: "tool_use", id: `toolu_${askId}`, name: "ask_user", input: {} }] }],
    usage: USAGE,
    ask: { id: askId, toolUseId: `toolu_${askId}`, spec, siblingResults: [], deadline: 1000 },
    now,
  });
  await store.setCardRef(askId, `card-${askId}`, 1000);
}

const resolution = (askId: string, answeredBy: string, now = 10): AskResolution => ({
  status: "answered",
  answer: { value: true },
  answeredBy,
  resultMessage: { role: "user", content: [{ type: "tool_result", tool_use_id: `toolu_${askId}`, content: "{}" }] },
  sessionStatus: "running",
  audit: { actor: answeredBy, action: "ask-answered", target: askId, outcome: "answered", at: now },
  now,
});

describe("PostgresSessionStore specifics", () => {
  it("a Stop and an ask's end committed by one process are heard by another at once (LISTEN/NOTIFY), only in that schema", () =>
    withStores(2, async ([a, b]) => {
      await withStores(1, async ([stranger]) => {
        const heard: StoreChange[] = [];
        const elsewhere: StoreChange[] = [];
        a!.changes.subscribe((change) => heard.push(change));
        stranger!.changes.subscribe((change) => elsewhere.push(change));
        await a!.changes.ready();
        await stranger!.changes.ready();
        await suspend(b!, "S", "A");
        await b!.requestStop("S");
        await expect.poll(() => heard).toEqual([{ kind: "stop-requested", sessionId: "S" }]);
        expect(await b!.resolveAsk("A", resolution("A", "U1"))).toMatchObject({ id: "A" });
        // A claim that loses (the ask already ended) commits nothing and tells nobody.
        expect(await b!.resolveAsk("A", resolution("A", "U2"))).toBeUndefined();
        await b!.requestStop("no-such-session");
        await a!.requestStop("S");
        // Notices arrive in commit order: anything told in between would show before this process's own Stop.
        await expect.poll(() => heard.length).toBeGreaterThanOrEqual(3);
        expect(heard).toEqual([
          { kind: "stop-requested", sessionId: "S" },
          { kind: "ask-ended", askId: "A" },
          { kind: "stop-requested", sessionId: "S" },
        ]);
        expect(elsewhere).toEqual([]);
      });
    }));

  it("refuses rows of an unknown schema version instead of guessing", () =>
    withStores(1, async ([store], schema) => {
      await suspend(store!, "S", "A");
      await admin.query(`UPDATE ${schema}.sessions SET v = 99`);
      await expect(store!.getSession("S")).rejects.toMatchObject({ code: "unknown-schema-version" });
      await expect(store!.startTurnOrQueue("S", user("x"), 5)).rejects.toMatchObject({ code: "unknown-schema-version" });
      await admin.query(`UPDATE ${schema}.messages SET v = 99`);
      await expect(store!.loadMessages("S")).rejects.toMatchObject({ code: "unknown-schema-version" });
      await admin.query(`UPDATE ${schema}.asks SET v = 99`);
      await expect(store!.getAsk("A")).rejects.toMatchObject({ code: "unknown-schema-version" });
    }));

  it("a step writes only its new messages, whatever the history length", () =>
    withStores(1, async ([store], schema) => {
      await store!.createSession({ id: "S", conversation: conversation("S"), ownerId: "U1", now: 1 });
      await store!.startTurnOrQueue("S", user("x"), 1);
      const message: ChatMessage = { role: "assistant", content: [{ type: "text", text: "y".repeat(500) }] };
      for (let index = 0; index < 200; index++) await store!.commitStep("S", { messages: [message], usage: USAGE, now: 2 });
      await store!.commitStep("S", { messages: [message, message], usage: USAGE, now: 3 });
      // xmin is the transaction that wrote a row version: the session row's is the last step's.
      const { rows } = await admin.query<{ count: number }>(
        `SELECT COUNT(*)::integer AS count FROM ${schema}.messages WHERE xmin = (SELECT xmin FROM ${schema}.sessions WHERE id = 'S')`,
      );
      expect(rows[0]?.count).toBe(2);
      expect(await store!.loadMessages("S")).toHaveLength(203);
    }));

  it("three processes migrating an empty schema at once apply each migration exactly once", async () => {
    const schema = freshSchema();
    const opened = await Promise.allSettled([1, 2, 3].map(() => PostgresSessionStore.open(DATABASE_URL, { schema })));
    const stores = opened.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
    try {
      expect(opened.filter((result) => result.status === "rejected")).toEqual([]);
      const { rows } = await admin.query<{ version: number }>(`SELECT version FROM ${schema}.schema_migrations ORDER BY version`);
      expect(rows.map((row) => row.version)).toEqual(loadMigrations().map((migration) => migration.version));
      expect(await stores[2]!.claimEvent("E", 1)).toBe(true);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
      await dropSchema(schema);
    }
  });

  it("refuses a database migrated by a newer Parley", () =>
    withStores(1, async (_stores, schema) => {
      await admin.query(`INSERT INTO ${schema}.schema_migrations (version, name, applied_at) VALUES (999, '999_future.sql', 0)`);
      await expect(PostgresSessionStore.open(DATABASE_URL, { schema })).rejects.toMatchObject({ code: "schema-too-new" });
    }));

  it("two processes racing to answer one ask: exactly one winner, one result message, one audit row (50 rounds)", () =>
    withStores(2, async ([first, second], schema) => {
      for (let round = 0; round < 50; round++) await suspend(first!, `S${round}`, `A${round}`);
      for (let round = 0; round < 50; round++) {
        const askId = `A${round}`;
        const results = await Promise.all([
          first!.resolveAsk(askId, resolution(askId, "U1")),
          second!.resolveAsk(askId, resolution(askId, "U2")),
        ]);
        expect(results.filter((ask) => ask !== undefined)).toHaveLength(1);
        expect(await second!.loadMessages(`S${round}`)).toHaveLength(3);
      }
      const audit = await admin.query<{ count: number }>(`SELECT COUNT(*)::integer AS count FROM ${schema}.audit`);
      expect(audit.rows[0]?.count).toBe(50);
    }));

  it("two processes racing to start a turn on an idle session: exactly one starts, the other queues", () =>
    withStores(2, async ([first, second]) => {
      for (let round = 0; round < 20; round++) {
        const id = `S${round}`;
        await first!.createSession({ id, conversation: conversation(id), ownerId: "U1", now: 1 });
        const results = await Promise.all([first!.startTurnOrQueue(id, user("a"), 2), second!.startTurnOrQueue(id, user("b"), 2)]);
        expect(results.sort()).toEqual(["queued", "started"]);
        // The same event delivered to both processes: one turn, one duplicate.
        const other = `T${round}`;
        await first!.createSession({ id: other, conversation: conversation(other), ownerId: "U1", now: 1 });
        const duplicates = await Promise.all([
          first!.startTurnOrQueue(other, user("c"), 2, `E${round}`),
          second!.startTurnOrQueue(other, user("c"), 2, `E${round}`),
        ]);
        expect(duplicates.sort()).toEqual(["duplicate", "started"]);
        expect(await first!.loadMessages(other)).toHaveLength(1);
      }
    }));

  it("two processes racing to claim one event id: exactly one true (50 rounds)", () =>
    withStores(2, async ([first, second]) => {
      for (let round = 0; round < 50; round++) {
        const results = await Promise.all([first!.claimEvent(`E${round}`, 1), second!.claimEvent(`E${round}`, 1)]);
        expect(results.filter(Boolean)).toHaveLength(1);
      }
    }));

  it("a row lock held past the lock timeout is 'storage-busy', with the driver error as cause", () =>
    withStores(
      1,
      async ([store], schema) => {
        await store!.createSession({ id: "S", conversation: conversation("S"), ownerId: "U1", now: 1 });
        const holder = await admin.connect();
        try {
          await holder.query("BEGIN");
          await holder.query(`SELECT * FROM ${schema}.sessions WHERE id = 'S' FOR UPDATE`);
          const failure = await store!.requestStop("S").catch((error: unknown) => error);
          expect(failure).toMatchObject({ name: "StoreError", code: "storage-busy", cause: { code: "55P03" } });
        } finally {
          await holder.query("ROLLBACK");
          holder.release();
        }
      },
      { lockTimeoutMs: 100 },
    ));

  it("an unreachable server is 'storage-unavailable', and no message shows the password", async () => {
    const failure = await PostgresSessionStore.open("postgres://parley:hunter2@127.0.0.1:1/test").catch((error: unknown) => error);
    expect(failure).toMatchObject({ name: "StoreError", code: "storage-unavailable" });
    const error = failure as Error;
    expect(`${error.message} ${error.stack} ${(error.cause as Error).message}`).not.toContain("hunter2");
  });

  it("two processes racing to open an ask: one per idempotency key, one per thread (20 rounds)", () =>
    withStores(2, async ([first, second], schema) => {
      const request = (askId: string, thread: string, key: string | null): NewExternalAsk => ({
        session: { id: `S-${askId}`, conversation: conversation(thread), ownerId: "api:ci", now: 1 },
        ask: { id: askId, toolUseId: `api:${askId}`, spec, siblingResults: [], deadline: 1000 },
        token: "ci",
        idempotencyKey: key,
        requestHash: "ab".repeat(32),
        metadata: null,
        callbackUrl: null,
        now: 1,
      });
      const race = (a: NewExternalAsk, b: NewExternalAsk) => Promise.all([first!.createExternalAsk(a), second!.createExternalAsk(b)]);
      for (let round = 0; round < 20; round++) {
        // Retries of one request on two new threads: the idempotency index decides.
        const split = await race(request(`A${round}`, `a${round}`, `K${round}`), request(`B${round}`, `b${round}`, `K${round}`));
        expect(split.map((result) => result.kind).sort()).toEqual(["created", "replayed"]);
        const winner = split.find((result) => result.kind === "created");
        const replay = split.find((result) => result.kind === "replayed");
        expect(replay?.kind === "replayed" && winner?.kind === "created" && replay.external.askId === winner.askId).toBe(true);
        // Retries of one request on the same new thread: the loser waited on the thread's session, yet it is a replay.
        const same = await race(request(`C${round}`, `c${round}`, `L${round}`), request(`D${round}`, `c${round}`, `L${round}`));
        expect(same.map((result) => result.kind).sort()).toEqual(["created", "replayed"]);
        // Two different requests on one new thread: one question, the other is told the thread is busy.
        const busy = await race(request(`E${round}`, `e${round}`, null), request(`F${round}`, `e${round}`, null));
        expect(busy.map((result) => result.kind).sort()).toEqual(["busy", "created"]);
      }
      const counts = await admin.query<{ asks: number; records: number; sessions: number }>(
        `SELECT (SELECT COUNT(*) FROM ${schema}.asks)::integer AS asks, (SELECT COUNT(*) FROM ${schema}.api_asks)::integer AS records,
           (SELECT COUNT(*) FROM ${schema}.sessions)::integer AS sessions`,
      );
      // Per round: one ask, one record and one session each for the split retry, the same-thread retry and the busy pair.
      expect(counts.rows[0]).toEqual({ asks: 60, records: 60, sessions: 60 });
    }));

  it("admin queries (listing, stats, purge, settings) agree with the memory store", async () => {
    async function script(store: Storage) {
      await suspend(store, "S1", "A1", 3);
      await suspend(store, "S2", "A2", 4);
      await store.resolveAsk("A2", resolution("A2", "U2", 30));
      await store.commitStep("S2", { messages: [], usage: USAGE, end: { outcome: "completed" }, now: 40 });
      await store.createSession({ id: "S3", conversation: { ...conversation("S3"), channel: "C2" }, ownerId: "U3", now: 5 });
      await store.saveSetting("maxAsks", "3");
      await store.saveSetting("maxAsks", "4");
      const ids = (sessions: { id: string }[]) => sessions.map((session) => session.id);
      const listed = {
        all: ids(await store.listSessions({ limit: 10, offset: 0 })),
        page: ids(await store.listSessions({ limit: 1, offset: 1 })),
        idle: ids(await store.listSessions({ status: "idle", limit: 10, offset: 0 })),
        channel: ids(await store.listSessions({ channel: "C2", limit: 10, offset: 0 })),
        owner: ids(await store.listSessions({ ownerId: "U1", limit: 10, offset: 0 })),
        asks: (await store.listAsks("S2")).map((ask) => [ask.id, ask.status]),
      };
      const { databaseBytes, ...stats } = await store.stats();
      const purged = await store.purgeEnded(35);
      const purgedLater = await store.purgeEnded(100);
      const remaining = ids(await store.listSessions({ limit: 10, offset: 0 }));
      return { listed, stats, purged, purgedLater, remaining, settings: await store.loadSettings(), databaseBytes };
    }
    const expected = await script(new MemorySessionStore());
    await withStores(1, async ([store]) => {
      const actual = await script(store!);
      expect(actual.databaseBytes).toBeGreaterThan(0);
      expect({ ...actual, databaseBytes: 0 }).toEqual({ ...expected, databaseBytes: 0 });
    });
  });
});
