/**
 * One process of the multi-process suspend + resume bench (bench/workers/postgres-throughput.ts starts N of them).
 *
 *   node --import tsx bench/workers/resume-process.ts <parley|langgraph> <target> <history> <sessions> <asks> <tag> [langgraph schema]
 *
 * target: a postgres:// URL (its search_path set to the run's schema) or, for Parley only, a SQLite file.
 * The store or checkpointer is already migrated or set up by the parent. The process first brings its `sessions`
 * sessions to their first card (not timed), prints "ready", waits for a line on stdin, then answers every card in
 * turn, each resume running to the next card or to the end of the turn, and prints one line of JSON: its resumes'
 * latencies and the wall-clock instants (ms since the epoch) the timed phase began and ended.
 * The work is section 1–3's (bench/workload.ts): K asks per session, H prior messages, a zero-latency model.
 */
import { createInterface } from "node:readline";
import { Annotation, Command, END, interrupt, START, StateGraph } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import pg from "pg";
import { PostgresSessionStore } from "../../db/postgres/postgres-session-store.js";
import { SqliteSessionStore } from "../../db/sqlite-session-store.js";
import { Engine } from "../../src/engine/engine.js";
import { createRuntimeSettings } from "../../src/engine/settings.js";
import { SILENT_LOGGER } from "../../src/logger.js";
import { BenchAdapter } from "../parley-throughput.js";
import { ASK_INPUT, priorHistory, ScriptedModel, type Workload } from "../workload.js";

export interface ProcessResult {
  tag: string;
  resumes: number;
  startedAt: number;
  endedAt: number;
  latenciesMs: number[];
}

/** A runner: `prepare` brings every session to its first card; `resume(index, ask)` answers one card. */
interface Runner {
  prepare(): Promise<void>;
  resume(session: number, ask: number): Promise<void>;
  close(): Promise<void>;
}

const OWNER = { id: "U_OWNER" };
const ZERO = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };

/** The real engine, as bench/parley-throughput.ts drives it, on either store. */
async function parleyRunner(target: string, workload: Workload, tag: string): Promise<Runner> {
  const store = target.startsWith("postgres") ? await PostgresSessionStore.open(target) : new SqliteSessionStore(target);
  const adapter = new BenchAdapter();
  const engine = new Engine({
    store,
    model: new ScriptedModel(workload.asksPerSession),
    adapters: [adapter],
    logger: SILENT_LOGGER,
    settings: createRuntimeSettings({ maxAskPerTurn: workload.asksPerSession, maxIterations: 50 }),
  });
  const prior = priorHistory(workload.history);
  const id = (index: number) => `${tag}-S${index}`;
  return {
    async prepare() {
      for (let index = 0; index < workload.sessions; index++) {
        const conversation = { platform: "slack" as const, workspace: "T", channel: "C", thread: `${tag}-t${index}` };
        const session = await store.createSession({ id: id(index), conversation, ownerId: OWNER.id, now: Date.now() });
        if (prior.length > 0)
          await store.commitStep(session.id, { messages: prior, usage: ZERO, end: { outcome: "completed" }, now: Date.now() });
        await engine.handleMessage({ eventId: `${tag}-E${index}`, conversation, author: OWNER, text: "deploy", addressedToBot: true });
        await engine.idle();
        if (!adapter.latestCard.has(session.id)) throw new Error(`session ${session.id} did not reach its first card`);
      }
    },
    async resume(index) {
      const card = adapter.latestCard.get(id(index))!;
      const outcome = await engine.answer(card.askId, OWNER, { kind: "option", index: 1 });
      if (outcome.kind !== "accepted") throw new Error(`answer to ${card.askId}: ${outcome.kind}`);
      await engine.idle();
    },
    async close() {
      await engine.close();
      await store.close();
    },
  };
}

interface Message {
  role: string;
  content: unknown;
}

/** The graph of bench/langgraph-throughput.ts (an agent node, an ask node that calls interrupt()), on PostgresSaver. */
async function langgraphRunner(url: string, schema: string, workload: Workload, tag: string): Promise<Runner> {
  const State = Annotation.Root({
    messages: Annotation<Message[]>({ reducer: (left, right) => left.concat(right), default: () => [] }),
    asked: Annotation<number>({ reducer: (_, right) => right, default: () => 0 }),
  });
  const graph = new StateGraph(State)
    .addNode("agent", (state) => {
      if (state.asked >= workload.asksPerSession)
        return { messages: [{ role: "assistant", content: [{ type: "text", text: "Deployed." }] }] };
      return {
        messages: [{ role: "assistant", content: [{ type: "tool_use", id: `toolu_${state.asked}`, name: "ask_user", input: ASK_INPUT }] }],
      };
    })
    .addNode("ask", (state) => {
      const answer = interrupt<typeof ASK_INPUT, string>(ASK_INPUT);
      const content = [{ type: "tool_result", tool_use_id: `toolu_${state.asked}`, content: JSON.stringify({ ok: true, value: answer }) }];
      return { messages: [{ role: "user", content }], asked: state.asked + 1 };
    })
    .addEdge(START, "agent")
    .addConditionalEdges("agent", (state) => (state.asked >= workload.asksPerSession ? END : "ask"))
    .addEdge("ask", "agent");
  // Its own pool, as PostgresSaver.fromConnString makes one (pg's default of 10 connections), so it can be closed.
  const pool = new pg.Pool({ connectionString: url });
  const saver = new PostgresSaver(pool, undefined, { schema });
  const app = graph.compile({ checkpointer: saver });
  await app.getGraph();
  const prior = priorHistory(workload.history).map((message) => ({ role: message.role, content: message.content }));
  const config = (index: number) => ({ configurable: { thread_id: `${tag}-S${index}` } });
  return {
    async prepare() {
      for (let index = 0; index < workload.sessions; index++) {
        await app.invoke({ messages: [...prior, { role: "user", content: [{ type: "text", text: "deploy" }] }] }, config(index));
      }
    },
    async resume(index) {
      await app.invoke(new Command({ resume: "production" }), config(index));
    },
    async close() {
      await pool.end();
    },
  };
}

const [system, target, history, sessions, asks, tag, schema] = process.argv.slice(2);
if (!target || !tag) throw new Error("usage: resume-process.ts <parley|langgraph> <target> <history> <sessions> <asks> <tag> [schema]");
const workload: Workload = { sessions: Number(sessions), asksPerSession: Number(asks ?? 3), history: Number(history) };
const runner =
  system === "langgraph" ? await langgraphRunner(target, schema ?? "public", workload, tag) : await parleyRunner(target, workload, tag);
await runner.prepare();
const lines = createInterface({ input: process.stdin });
const go = new Promise<void>((resolve) => lines.once("line", () => resolve()));
process.stdout.write("ready\n");
await go;
lines.close();

const latenciesMs: number[] = [];
const startedAt = performance.timeOrigin + performance.now();
for (let index = 0; index < workload.sessions; index++) {
  for (let ask = 0; ask < workload.asksPerSession; ask++) {
    const started = performance.now();
    await runner.resume(index, ask);
    latenciesMs.push(performance.now() - started);
  }
}
const endedAt = performance.timeOrigin + performance.now();
await runner.close();
const result: ProcessResult = { tag, resumes: latenciesMs.length, startedAt, endedAt, latenciesMs };
process.stdout.write(`${JSON.stringify(result)}\n`);
