import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteSessionStore } from "../../db/sqlite-session-store.js";
import { Engine } from "../../src/engine/engine.js";
import { createRuntimeSettings } from "../../src/engine/settings.js";
import { SILENT_LOGGER } from "../../src/logger.js";
import type { PlatformAdapter } from "../../src/ports/platform-adapter.js";
import { ScriptedModel } from "../workload.js";

// RSS after 1k, 10k, 100k suspended sessions in one process: suspended sessions live in the database.
const checkpoints = (process.argv[2] ?? "1000,10000,100000").split(",").map(Number);
const forgetful: PlatformAdapter = {
  platform: "slack",
  postCard: async (card) => card.askId,
  settleCard: async () => {},
  postMessage: async () => {},
  notifyPrivately: async () => {},
  postNotice: async () => {},
  showProgress: async () => {},
};
const directory = mkdtempSync(join(tmpdir(), "parley-memory-"));
const store = new SqliteSessionStore(join(directory, "memory.db"));
const engine = new Engine({
  store,
  model: new ScriptedModel(3),
  adapters: [forgetful],
  logger: SILENT_LOGGER,
  settings: createRuntimeSettings(),
});
const gc = (globalThis as { gc?: () => void }).gc;
const rows: Array<{ suspended: number; rssMiB: number; heapMiB: number }> = [];
let created = 0;
try {
  for (const target of checkpoints) {
    for (; created < target; created++) {
      const conversation = { platform: "slack" as const, workspace: "T", channel: "C", thread: `t${created}` };
      await engine.handleMessage({ eventId: `E${created}`, conversation, author: { id: "U" }, text: "deploy", addressedToBot: true });
      if (created % 200 === 0) await engine.idle();
    }
    await engine.idle();
    gc?.();
    const usage = process.memoryUsage();
    rows.push({ suspended: created, rssMiB: usage.rss / 1048576, heapMiB: usage.heapUsed / 1048576 });
  }
  const waiting = (await store.stats()).sessionsByStatus.waiting;
  process.stdout.write(`${JSON.stringify({ rows, waiting })}\n`);
} finally {
  await store.close();
  rmSync(directory, { recursive: true, force: true });
}
