/**
 * Suspend + resume cycles straight on the store, PostgreSQL against SQLite, one process, one cycle at a time:
 * createSession, startTurnOrQueue, commitStep with an ask, setCardRef, resolveAsk, commitStep ending the turn.
 *
 *   npx tsx bench/postgres-throughput.ts [cycles]
 *
 * PostgreSQL from PARLEY_BENCH_DATABASE_URL (default postgres://root@127.0.0.1:5432/test), in a fresh schema
 * that is dropped afterwards. Bytes per session: the schema's tables, indexes and TOAST (stats().databaseBytes)
 * divided by the sessions written; for SQLite, the file after a checkpoint.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PostgresSessionStore } from "../db/postgres/postgres-session-store.js";
import { SqliteSessionStore } from "../db/sqlite-session-store.js";
import { parseAskSpec } from "../src/ask/spec.js";
import type { SessionStore } from "../src/ports/session-store.js";
import { ASK_INPUT } from "./workload.js";

const DATABASE_URL = process.env.PARLEY_BENCH_DATABASE_URL ?? "postgres://root@127.0.0.1:5432/test";
const CYCLES = Number(process.argv[2] ?? 2000);
const USAGE = { inputTokens: 1200, outputTokens: 80, cacheReadTokens: 1000, cacheWriteTokens: 0 };
const parsed = parseAskSpec(ASK_INPUT, 600);
if (!parsed.ok) throw new Error(parsed.error);
const spec = parsed.spec;

/** Milliseconds spent in each store call, summed over the measured cycles. */
const spent = new Map<string, number>();
async function timed<T>(operation: string, call: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await call();
  spent.set(operation, (spent.get(operation) ?? 0) + performance.now() - started);
  return result;
}

async function cycle(store: SessionStore, index: number): Promise<void> {
  const id = `S${index}`;
  const askId = `A${index}`;
  const toolUseId = `toolu_${index}`;
  const now = Date.now();
  const conversation = { platform: "slack" as const, workspace: "T", channel: "C", thread: `t${index}` };
  await timed("createSession", () => store.createSession({ id, conversation, ownerId: "U", now }));
  const message = { role: "user" as const, content: [{ type: "text" as const, text: "deploy the release" }] };
  await timed("startTurnOrQueue", () => store.startTurnOrQueue(id, message, now, `E${index}`));
  await timed("commitStep ask", () =>
    store.commitStep(id, {
      messages: [{ role: "assistant", content: [{ type: "tool_use", id: toolUseId, name: "ask_user", input: ASK_INPUT }] }],
      usage: USAGE,
      ask: { id: askId, toolUseId, spec, siblingResults: [], deadline: now + 600_000 },
      now,
    }),
  );
  await timed("setCardRef", () => store.setCardRef(askId, `card-${index}`, now + 600_000));
  const answer = '{"ok":true,"value":"production"}';
  const resolved = await timed("resolveAsk", () =>
    store.resolveAsk(askId, {
      status: "answered",
      answer: { value: "production" },
      answeredBy: "U",
      resultMessage: { role: "user", content: [{ type: "tool_result", tool_use_id: toolUseId, content: answer }] },
      sessionStatus: "running",
      audit: { actor: "U", action: "ask-answered", target: askId, outcome: "answered", at: now },
      now,
    }),
  );
  if (!resolved) throw new Error(`lost the claim on ${askId}`);
  await timed("commitStep end", () =>
    store.commitStep(id, {
      messages: [{ role: "assistant", content: [{ type: "text", text: "Deployed to production." }] }],
      usage: USAGE,
      end: { outcome: "completed" },
      now,
    }),
  );
}

async function measure(name: string, store: SessionStore, bytes: () => Promise<number>) {
  for (let index = 0; index < 50; index++) await cycle(store, 1_000_000 + index); // warm-up: connections, plans, caches
  spent.clear();
  const started = performance.now();
  for (let index = 0; index < CYCLES; index++) await cycle(store, index);
  const seconds = (performance.now() - started) / 1000;
  const sessions = CYCLES + 50;
  const perSession = (await bytes()) / sessions;
  console.log(
    `${name.padEnd(10)} ${CYCLES} cycles in ${seconds.toFixed(2)} s: ${(CYCLES / seconds).toFixed(0)} cycles/s, ` +
      `${((seconds * 1000) / CYCLES).toFixed(2)} ms/cycle, ${perSession.toFixed(0)} bytes/session`,
  );
  const perCall = [...spent].map(([operation, total]) => `${operation} ${((total * 1000) / CYCLES).toFixed(0)} µs`);
  console.log(`           per call: ${perCall.join(", ")}`);
}

const schema = `parley_bench_${process.pid}`;
const postgres = await PostgresSessionStore.open(DATABASE_URL, { schema });
try {
  await measure("postgres", postgres, async () => (await postgres.stats()).databaseBytes);
} finally {
  await postgres.pool.query(`DROP SCHEMA ${schema} CASCADE`);
  await postgres.close();
}

const directory = mkdtempSync(join(tmpdir(), "parley-bench-"));
const sqlite = new SqliteSessionStore(join(directory, "parley.db"));
try {
  await measure("sqlite", sqlite, async () => {
    sqlite.db.pragma("wal_checkpoint(TRUNCATE)");
    return statSync(join(directory, "parley.db")).size;
  });
} finally {
  await sqlite.close();
  rmSync(directory, { recursive: true, force: true });
}
