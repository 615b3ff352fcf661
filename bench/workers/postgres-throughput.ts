/**
 * Suspend + resume throughput with N processes on one store (issue 14), and the store's size per session.
 *
 *   npx tsx bench/workers/postgres-throughput.ts <system> <processes> <history> <sessions per process> [asks] [sync]
 *
 * system: parley-postgres, parley-sqlite (1 process) or langgraph-postgres (LangGraph JS with PostgresSaver).
 * sync: "sync-off" adds `-c synchronous_commit=off` to the PostgreSQL connections (default: the server's setting).
 * PostgreSQL from PARLEY_BENCH_DATABASE_URL (default postgres://root@127.0.0.1:5432/test), in a schema of this run's
 * own, given to every connection as `?options=-c search_path=<schema>` and dropped afterwards.
 *
 * Migrations (or PostgresSaver.setup()) run first, here. Then N processes of bench/workers/resume-process.ts each bring
 * their own sessions to their first card; when all are ready they answer them together. Each resume runs to the next
 * card or to the end of the turn, as in section 1–3 of `npm run bench`. resumes/s = every process's resumes over the
 * wall time from the first process's start to the last one's end. Bytes per session: pg_total_relation_size (heap,
 * indexes, TOAST, free-space and visibility maps) summed over the schema's tables, right after the run and again after
 * VACUUM FULL; for SQLite, the file after a WAL checkpoint. Prints one line of JSON.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import Database from "better-sqlite3";
import pg from "pg";
import { PostgresSessionStore } from "../../db/postgres/postgres-session-store.js";
import { SqliteSessionStore } from "../../db/sqlite-session-store.js";
import { percentile } from "../workload.js";
import type { ProcessResult } from "./resume-process.js";

export interface ScalingResult {
  system: string;
  store: "postgres" | "sqlite";
  synchronousCommit: "off" | "server";
  processes: number;
  history: number;
  sessions: number;
  resumes: number;
  seconds: number;
  resumesPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  bytesPerSession: number;
  /** PostgreSQL only: after VACUUM FULL of the schema's tables, i.e. without dead rows and free space. */
  vacuumedBytesPerSession: number | null;
  /** The store's size before the run, right after its migrations (or PostgresSaver.setup()): included in the figures above. */
  emptyBytes: number;
  /** /proc/loadavg's 1-minute figure before and after the run. */
  load: [number, number];
  /** Cores busy machine-wide during the timed phase (/proc/stat): these processes, the PostgreSQL server, anything else. */
  busyCores: number | null;
}

const DATABASE_URL = process.env.PARLEY_BENCH_DATABASE_URL ?? "postgres://root@127.0.0.1:5432/test";
const SYSTEMS = ["parley-postgres", "parley-sqlite", "langgraph-postgres"] as const;

/** Starts one resume-process: `ready` resolves when it has prepared its sessions, `result` with its JSON line when it exits. */
function startProcess(args: string[]): { child: ChildProcess; ready: Promise<void>; result: Promise<ProcessResult> } {
  const child = spawn(process.execPath, ["--import", "tsx", "bench/workers/resume-process.ts", ...args], {
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  let last = "";
  let onReady = () => {};
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  createInterface({ input: child.stdout! }).on("line", (line) => {
    last = line;
    if (line === "ready") onReady();
  });
  const result = new Promise<ProcessResult>((resolve, reject) => {
    child.on("close", (code) => {
      if (code === 0 && last.startsWith("{")) resolve(JSON.parse(last) as ProcessResult);
      else reject(new Error(`resume-process ${args[5]} exited with ${code}: ${stderr.trim() || last}`));
    });
  });
  // A process that fails while preparing fails the run at once, not after the others are ready.
  return { child, ready: Promise.race([ready, result.then(() => {})]), result };
}

/** Busy and total jiffies of all CPUs since boot, or null where there is no /proc/stat. */
function cpuJiffies(): { busy: number; total: number } | null {
  if (!existsSync("/proc/stat")) return null;
  const fields = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "").trim().split(/\s+/).slice(1, 9).map(Number);
  const total = fields.reduce((sum, value) => sum + value, 0);
  return { busy: total - (fields[3] ?? 0) - (fields[4] ?? 0), total };
}

let busyCores: number | null = null;

async function runProcesses(processes: number, argsFor: (index: number) => string[]): Promise<ProcessResult[]> {
  // Started together, so that preparing (not timed) takes no longer than it must; each then waits for "go".
  const started = Array.from({ length: processes }, (_, index) => startProcess(argsFor(index)));
  try {
    await Promise.all(started.map(({ ready }) => ready));
  } catch (error) {
    for (const { child } of started) child.kill();
    await Promise.allSettled(started.map(({ result }) => result));
    throw error;
  }
  const before = cpuJiffies();
  for (const { child } of started) child.stdin!.write("go\n");
  const results = await Promise.all(started.map(({ result }) => result));
  const after = cpuJiffies();
  if (before && after && after.total > before.total)
    busyCores = ((after.busy - before.busy) / (after.total - before.total)) * cpus().length;
  return results;
}

async function schemaBytes(client: pg.Client, schema: string): Promise<number> {
  const { rows } = await client.query<{ bytes: string }>(
    "SELECT COALESCE(SUM(pg_total_relation_size(oid)), 0)::bigint AS bytes FROM pg_class WHERE relnamespace = $1::regnamespace AND relkind = 'r'",
    [schema],
  );
  return Number(rows[0]?.bytes ?? 0);
}

async function scalingRun(
  system: (typeof SYSTEMS)[number],
  processes: number,
  history: number,
  sessionsPerProcess: number,
  asks = 3,
  synchronousCommitOff = false,
): Promise<ScalingResult> {
  if (system === "parley-sqlite" && processes !== 1) throw new Error("parley-sqlite runs in one process");
  const load = (): number => loadavg()[0] ?? 0;
  const loadBefore = load();
  const tag = (index: number) => `p${index}`;
  const common = (index: number) => [String(history), String(sessionsPerProcess), String(asks), tag(index)];
  let results: ProcessResult[];
  let bytes: number;
  let vacuumed: number | null = null;
  let empty: number;
  if (system === "parley-sqlite") {
    const directory = mkdtempSync(join(tmpdir(), "parley-scaling-"));
    const path = join(directory, "parley.db");
    try {
      await new SqliteSessionStore(path).close(); // migrations, before the timed processes start
      empty = statSync(path).size;
      results = await runProcesses(processes, (index) => ["parley", path, ...common(index)]);
      const db = new Database(path);
      db.pragma("wal_checkpoint(TRUNCATE)");
      db.close();
      bytes = statSync(path).size;
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  } else {
    const schema = `bench_${system.replace("-", "_")}_${randomBytes(4).toString("hex")}`;
    const settings = `-c search_path=${schema}${synchronousCommitOff ? " -c synchronous_commit=off" : ""}`;
    const url = `${DATABASE_URL}${DATABASE_URL.includes("?") ? "&" : "?"}options=${encodeURIComponent(settings)}`;
    const admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
    try {
      await admin.query(`CREATE SCHEMA ${schema}`);
      if (system === "parley-postgres") {
        await (await PostgresSessionStore.open(url)).close();
        empty = await schemaBytes(admin, schema);
        results = await runProcesses(processes, (index) => ["parley", url, ...common(index)]);
      } else {
        const pool = new pg.Pool({ connectionString: url });
        await new PostgresSaver(pool, undefined, { schema }).setup();
        await pool.end();
        empty = await schemaBytes(admin, schema);
        results = await runProcesses(processes, (index) => ["langgraph", url, ...common(index), schema]);
      }
      bytes = await schemaBytes(admin, schema);
      const { rows } = await admin.query<{ name: string }>(
        "SELECT quote_ident(relname) AS name FROM pg_class WHERE relnamespace = $1::regnamespace AND relkind = 'r'",
        [schema],
      );
      for (const { name } of rows) await admin.query(`VACUUM FULL ${schema}.${name}`);
      vacuumed = await schemaBytes(admin, schema);
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    }
  }
  const latencies = results.flatMap((result) => result.latenciesMs).sort((a, b) => a - b);
  const resumes = latencies.length;
  if (resumes !== processes * sessionsPerProcess * asks)
    throw new Error(`${resumes} resumes, not ${processes * sessionsPerProcess * asks}`);
  const seconds = (Math.max(...results.map((result) => result.endedAt)) - Math.min(...results.map((result) => result.startedAt))) / 1000;
  const sessions = processes * sessionsPerProcess;
  return {
    system: system.startsWith("parley") ? "Parley" : "LangGraph JS",
    store: system.endsWith("postgres") ? "postgres" : "sqlite",
    synchronousCommit: synchronousCommitOff ? "off" : "server",
    processes,
    history,
    sessions,
    resumes,
    seconds,
    resumesPerSecond: resumes / seconds,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    bytesPerSession: bytes / sessions,
    vacuumedBytesPerSession: vacuumed === null ? null : vacuumed / sessions,
    emptyBytes: empty,
    load: [loadBefore, load()],
    busyCores,
  };
}

const [system, processes, history, sessions, asks, sync] = process.argv.slice(2);
if (sync !== undefined && sync !== "sync-off") throw new Error(`the sixth argument is "sync-off" or nothing, not ${sync}`);
if (!SYSTEMS.includes(system as (typeof SYSTEMS)[number])) throw new Error(`system: one of ${SYSTEMS.join(", ")}`);
const result = await scalingRun(
  system as (typeof SYSTEMS)[number],
  Number(processes ?? 1),
  Number(history ?? 0),
  Number(sessions ?? 100),
  Number(asks ?? 3),
  sync === "sync-off",
);
process.stdout.write(`${JSON.stringify(result)}\n`);
