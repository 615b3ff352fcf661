import { statSync } from "node:fs";
import { SqliteSessionStore } from "../db/sqlite-session-store.js";
import { Engine } from "../src/engine/engine.js";
import { createRuntimeSettings } from "../src/engine/settings.js";
import { SILENT_LOGGER } from "../src/logger.js";
import type { CardView, PlatformAdapter } from "../src/ports/platform-adapter.js";
import { priorHistory, ScriptedModel, summarise, type ThroughputResult, type Workload } from "./workload.js";

/** Draws nothing; remembers the newest card of each session so the bench can answer it. */
export class BenchAdapter implements PlatformAdapter {
  readonly platform = "slack";
  readonly latestCard = new Map<string, CardView>();
  async postCard(card: CardView): Promise<string> {
    this.latestCard.set(card.sessionId, card);
    return card.askId;
  }
  async settleCard(): Promise<void> {}
  async postMessage(): Promise<void> {}
  async notifyPrivately(): Promise<void> {}
  async postNotice(): Promise<void> {}
  async showProgress(): Promise<void> {}
}

const OWNER = { id: "U_OWNER" };
const ZERO = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };

/** The real engine on a SQLite file: suspend + resume cycles, one resume timed at a time. */
export async function parleyThroughput(
  path: string,
  workload: Workload,
  checkpoints: "worker" | "on-commit" = "worker",
): Promise<ThroughputResult> {
  const store = new SqliteSessionStore(path, { checkpoints });
  const adapter = new BenchAdapter();
  const engine = new Engine({
    store,
    model: new ScriptedModel(workload.asksPerSession),
    adapters: [adapter],
    logger: SILENT_LOGGER,
    settings: createRuntimeSettings({ maxAskPerTurn: workload.asksPerSession, maxIterations: 50 }),
  });
  const prior = priorHistory(workload.history);
  const latencies: number[] = [];
  let elapsed = 0;
  for (let index = 0; index < workload.sessions; index++) {
    const conversation = { platform: "slack" as const, workspace: "T", channel: "C", thread: `t${index}` };
    const session = await store.createSession({ id: `S${index}`, conversation, ownerId: OWNER.id, now: Date.now() });
    if (prior.length > 0)
      await store.commitStep(session.id, { messages: prior, usage: ZERO, end: { outcome: "completed" }, now: Date.now() });
    await engine.handleMessage({ eventId: `E${index}`, conversation, author: OWNER, text: "deploy", addressedToBot: true });
    await engine.idle();
    for (let ask = 0; ask < workload.asksPerSession; ask++) {
      const card = adapter.latestCard.get(session.id)!;
      const started = performance.now();
      await engine.answer(card.askId, OWNER, { kind: "option", index: 1 });
      await engine.idle();
      const took = performance.now() - started;
      latencies.push(took);
      elapsed += took;
    }
  }
  store.db.pragma("wal_checkpoint(TRUNCATE)");
  await store.close();
  return summarise("Parley", workload, latencies, elapsed / 1000, statSync(path).size);
}
