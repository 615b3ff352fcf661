import { AnthropicModelClient } from "../adapters/anthropic/anthropic-model-client.js";
import { TerminalAdapter } from "../adapters/terminal/terminal-adapter.js";
import { SqliteSessionStore } from "../db/sqlite-session-store.js";
import { AdminCommands } from "./admin/admin-commands.js";
import { withStoredSettings } from "./admin/runtime-settings.js";
import { type Config, loadConfig } from "./config.js";
import { Engine } from "./engine/engine.js";
import { DEFAULT_SETTINGS } from "./engine/settings.js";
import { ConfigError } from "./errors.js";
import { createLogger } from "./logger.js";
import { CURRENT_TIME_TOOL } from "./loop/tools.js";

/** The composition root: the only place that reads the environment and wires adapters, store and model. */
async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = createLogger(config.LOG_LEVEL);
  if (!config.ANTHROPIC_API_KEY && !config.ANTHROPIC_BASE_URL) {
    throw new ConfigError("invalid configuration:\n  ANTHROPIC_API_KEY: is required to talk to the model");
  }
  const store = new SqliteSessionStore(config.DATABASE_PATH);
  const model = new AnthropicModelClient({
    // A compatible server behind ANTHROPIC_BASE_URL may need no key; the SDK still wants one.
    apiKey: config.ANTHROPIC_API_KEY ?? "unused",
    model: config.ANTHROPIC_MODEL,
    ...(config.ANTHROPIC_BASE_URL ? { baseURL: config.ANTHROPIC_BASE_URL } : {}),
  });
  const terminal = new TerminalAdapter(process.stdin, process.stdout);
  const engine = new Engine({
    store,
    model,
    adapters: [terminal],
    logger,
    tools: [CURRENT_TIME_TOOL],
    // Settings an admin changed with /parley config survive restarts and win over the environment.
    settings: withStoredSettings(settingsFrom(config), await store.loadSettings()),
    adminUserIds: config.ADMIN_USER_IDS,
  });

  const admin = new AdminCommands(engine, store);
  void admin;

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutdown-started");
    await engine.close();
    await store.close();
    process.exit(0);
  };
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
  process.once("SIGINT", () => void shutdown("SIGINT"));

  await engine.recover();
  engine.startSweeper();
  await terminal.run(engine);
  await shutdown("end-of-input");
}

function settingsFrom(config: Config) {
  return {
    ...DEFAULT_SETTINGS,
    maxAskPerTurn: config.MAX_ASK_USER_PER_TURN,
    maxIterations: config.MAX_ITERATIONS,
    askTimeoutSeconds: config.ASK_TIMEOUT_S,
    answerPolicy: config.ANSWER_POLICY,
  };
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) process.stderr.write(`parley: ${error.message}\n`);
  else process.stderr.write(`parley: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
