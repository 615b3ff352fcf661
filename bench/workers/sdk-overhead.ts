import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AnthropicModelClient } from "../../adapters/anthropic/anthropic-model-client.js";
import { SqliteSessionStore } from "../../db/sqlite-session-store.js";
import { Engine } from "../../src/engine/engine.js";
import { createRuntimeSettings } from "../../src/engine/settings.js";
import { SILENT_LOGGER } from "../../src/logger.js";
import { ask, FakeAnthropic, reply } from "../../test/fakes/fake-anthropic.js";
import { BenchAdapter } from "../parley-throughput.js";
import { percentile } from "../workload.js";

// Ask round trips through the real Anthropic SDK and a local Messages API that streams like the real one.
// Overhead = round trip (answer → next card) minus the time the fake model spent serving the request.
const rounds = Number(process.argv[2] ?? 300);
const fake = await new FakeAnthropic().start();
const directory = mkdtempSync(join(tmpdir(), "parley-sdk-"));
const store = new SqliteSessionStore(join(directory, "sdk.db"));
const adapter = new BenchAdapter();
const engine = new Engine({
  store,
  model: new AnthropicModelClient({ apiKey: "bench", model: "claude-sonnet-5-5", baseURL: fake.url, maxRetries: 0 }),
  adapters: [adapter],
  logger: SILENT_LOGGER,
  settings: createRuntimeSettings({ maxAskPerTurn: 20, maxIterations: 25 }),
});
const conversation = { platform: "slack" as const, workspace: "T", channel: "C", thread: "sdk" };
/** A turn may ask at most 20 questions (the setting's maximum): every this many rounds the turn ends and a new one starts. */
const ROUNDS_PER_TURN = 18;
const overheads: number[] = [];
const totals: number[] = [];
try {
  fake.script(ask({ type: "confirm", question: "Round 0?" }));
  await engine.handleMessage({ eventId: "E0", conversation, author: { id: "U" }, text: "go", addressedToBot: true });
  await engine.idle();
  const session = await store.findSession(conversation);
  for (let round = 1; round <= rounds; round++) {
    const endsTurn = round % ROUNDS_PER_TURN === 0;
    fake.script(endsTurn ? reply("Next turn.") : ask({ type: "confirm", question: `Round ${round}?` }));
    const served = fake.serveTimesMs.length;
    const card = adapter.latestCard.get(session!.id)!;
    const started = performance.now();
    await engine.answer(card.askId, { id: "U" }, { kind: "option", index: 0 });
    await engine.idle();
    const total = performance.now() - started;
    const modelTime = fake.serveTimesMs.slice(served).reduce((sum, value) => sum + value, 0);
    if (endsTurn) {
      // Not measured: a turn's end and the next turn's first question.
      fake.script(ask({ type: "confirm", question: `Round ${round}, next turn?` }));
      await engine.handleMessage({ eventId: `E${round}`, conversation, author: { id: "U" }, text: "again", addressedToBot: true });
      await engine.idle();
      continue;
    }
    if (round > 10) {
      totals.push(total);
      overheads.push(total - modelTime);
    }
  }
  const sortedOverhead = [...overheads].sort((a, b) => a - b);
  const sortedTotal = [...totals].sort((a, b) => a - b);
  process.stdout.write(
    `${JSON.stringify({ rounds: overheads.length, totalP50Ms: percentile(sortedTotal, 0.5), overheadP50Ms: percentile(sortedOverhead, 0.5), overheadP99Ms: percentile(sortedOverhead, 0.99) })}\n`,
  );
} finally {
  await engine.close();
  await store.close();
  await fake.close();
  rmSync(directory, { recursive: true, force: true });
}
