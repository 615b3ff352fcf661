import { dirname, join } from "node:path";
import { AnthropicModelClient } from "../adapters/anthropic/anthropic-model-client.js";
import { apiRoutes } from "../adapters/http/api-routes.js";
import { fetchCallbackSender } from "../adapters/http/callback-sender.js";
import { healthRoutes } from "../adapters/http/health-routes.js";
import { startHttpServer } from "../adapters/http/http-server.js";
import { mcpRoute } from "../adapters/http/mcp-endpoint.js";
import { RateLimit } from "../adapters/http/rate-limit.js";
import { standardInputUsable } from "../adapters/terminal/standard-input.js";
import { TerminalAdapter } from "../adapters/terminal/terminal-adapter.js";
import { openStorage } from "../db/open-storage.js";
import { AdminCommands } from "./admin/admin-commands.js";
import { withStoredSettings } from "./admin/runtime-settings.js";
import { mcpConfigPath, teamInstructions } from "./agent-setup.js";
import { type Config, loadConfig } from "./config.js";
import { Engine } from "./engine/engine.js";
import { createRuntimeSettings, DEFAULT_SETTINGS, type EngineSettings } from "./engine/settings.js";
import { loadEnvFileIfPresent } from "./env-file.js";
import { createHealthProbe } from "./health.js";
import { listenFailure } from "./listen-failure.js";
import { createFileLogger, createLogger, type Logger } from "./logger.js";
import { buildSystemPrompt } from "./loop/system-prompt.js";
import { CURRENT_TIME_TOOL } from "./loop/tools.js";
import type { AskApi } from "./ports/ask-api.js";
import type { ServingAdapter } from "./ports/conversation.js";
import { ConfigError, StartError } from "./ports/errors.js";
import type { HttpRoute } from "./ports/http-route.js";
import type { ToolProvider } from "./ports/tool-provider.js";
import { TOOL_POLICY_SETTING, ToolRules } from "./tools/tool-rules.js";

/** The composition root: the only place that reads the environment and wires adapters, store and model. */
async function main(): Promise<void> {
  loadEnvFileIfPresent();
  const config = loadConfig(process.env);
  const inTerminal = !config.SLACK_BOT_TOKEN && !config.DISCORD_TOKEN;
  if (inTerminal && !standardInputUsable()) throw new StartError(NO_KEYBOARD);
  const store = await openStorage(config);
  // In the terminal, log lines on stderr would mix into the conversation: they go beside the database instead.
  const logFile = config.LOG_FILE ?? (inTerminal ? join(dirname(config.DATABASE_PATH), "parley.log") : undefined);
  const logger = logFile ? openLogFile(config.LOG_LEVEL, logFile, config.LOG_FILE !== undefined) : createLogger(config.LOG_LEVEL);
  let platforms: ServingAdapter[] = [];
  const health = createHealthProbe({ ping: () => store.ping(), platforms: () => platforms });
  // The API's routes reach the engine, which needs the adapters first: they are bound once it exists.
  let api: AskApi | undefined;
  const routes = [...healthRoutes(health), ...httpApiRoutes(() => api, config, logger)];
  platforms = await platformAdapters(config, logger, routes);
  const model = new AnthropicModelClient({
    // A compatible server behind ANTHROPIC_BASE_URL may need no key; the SDK still wants one.
    apiKey: config.ANTHROPIC_API_KEY ?? "unused",
    model: config.ANTHROPIC_MODEL,
    baseURL: config.ANTHROPIC_BASE_URL,
  });
  const storedSettings = await store.loadSettings();
  const toolProvider = await mcpToolProvider(config, logger);
  const terminal = platforms.length === 0 ? new TerminalAdapter(process.stdin, process.stdout, Date.now, logFile) : undefined;
  // Settings an admin changed with /parley config survive restarts and win over the environment.
  const settings = createRuntimeSettings(withStoredSettings(settingsFrom(config), storedSettings));
  const toolRules = new ToolRules(config.TOOL_POLICY, storedSettings[TOOL_POLICY_SETTING]);
  const engine = new Engine({
    store,
    ...(store.changes ? { changes: store.changes } : {}),
    model,
    adapters: terminal ? [terminal] : platforms,
    logger,
    tools: [CURRENT_TIME_TOOL],
    toolProvider,
    toolRules,
    toolTimeoutSeconds: config.TOOL_TIMEOUT_S,
    modelRetry: { maxWaitMs: config.MODEL_RETRY_MAX_S * 1000 },
    systemPrompt: buildSystemPrompt(teamInstructions(config)),
    settings,
    adminUserIds: config.ADMIN_USER_IDS,
    apiTokens: config.API_TOKENS,
    callbackSender: fetchCallbackSender,
  });
  api = engine.api;
  const admin = new AdminCommands({ engine, store, settings, toolRules, envTokenNames: config.API_TOKENS.map((token) => token.name) });
  const onCommand = admin.run.bind(admin);

  let stopping = false;
  const shutdown = async (reason: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, "shutdown-started");
    // Long-polls would keep the listeners open for up to an hour (MCP waits): they answer now, and callers ask again.
    engine.endApiWaits();
    // Stop taking new work first, then let in-flight turns finish or reach their next checkpoint.
    for (const adapter of platforms) await adapter.stop().catch((error: unknown) => logger.warn({ err: error }, "adapter-stop failed"));
    await httpServer?.close();
    await engine.close();
    await toolProvider?.close();
    await store.close();
    logger.info({ reason }, "shutdown-done");
    process.exit(0);
  };
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
  process.once("SIGINT", () => void shutdown("SIGINT"));

  // Servers start (or fail, and retry by themselves) before recovery, so a recovered turn finds its tools.
  await toolProvider?.start();
  // Slack in HTTP mode serves health and the API on its own listener; Socket Mode and Discord need one for them.
  const slackListens = config.SLACK_BOT_TOKEN !== undefined && config.SLACK_APP_TOKEN === undefined;
  const httpServer =
    platforms.length > 0 && !slackListens
      ? await startHttpServer(routes, config.PORT, config.HOST).catch((error: unknown) => {
          throw listenFailure(error, { port: config.PORT, host: config.HOST });
        })
      : undefined;
  // Adapters start before recovery, so a bad token fails before any card is posted.
  for (const adapter of platforms)
    await adapter.start(engine, onCommand).catch((error: unknown) => {
      throw listenFailure(error, { port: config.PORT, host: config.HOST });
    });
  await terminal?.open(engine);
  await engine.recover();
  engine.startSweeper();
  logger.info({ platforms: platforms.map((adapter) => adapter.platform) }, "parley-started");
  if (terminal) {
    await terminal.run(engine);
    await shutdown("end-of-input");
  }
}

const NO_KEYBOARD =
  "no Slack or Discord variables are set, so Parley would run in the terminal, but standard input is not a keyboard " +
  "or a pipe (it is /dev/null or closed); set SLACK_BOT_TOKEN (with SLACK_SIGNING_SECRET or SLACK_APP_TOKEN) or " +
  "DISCORD_TOKEN and DISCORD_APPLICATION_ID, or run npm start in a terminal";

function openLogFile(level: string, path: string, named: boolean): Logger {
  try {
    return createFileLogger(level, path);
  } catch (error) {
    const what = named ? `LOG_FILE=${path}` : `the log file ${path} (set LOG_FILE to move it)`;
    throw new StartError(`cannot write ${what}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/** The MCP servers of the mcpServers file, if there is one; the MCP SDK is loaded only then. */
async function mcpToolProvider(config: Config, logger: Logger): Promise<ToolProvider | undefined> {
  const path = mcpConfigPath(config);
  if (!path) return undefined;
  const { loadMcpConfig } = await import("../adapters/mcp/mcp-config.js");
  const { McpToolProvider } = await import("../adapters/mcp/mcp-tool-provider.js");
  const servers = await loadMcpConfig(path, process.env);
  return new McpToolProvider({
    servers,
    logger,
    toolTimeoutMs: config.TOOL_TIMEOUT_S * 1000,
    maxResultChars: config.TOOL_RESULT_MAX_CHARS,
    parentEnvironment: process.env,
  });
}

/** Platform SDKs are imported only when configured: the terminal starts without loading Bolt or discord.js. */
async function platformAdapters(config: Config, logger: Logger, routes: HttpRoute[]): Promise<ServingAdapter[]> {
  const adapters: ServingAdapter[] = [];
  if (config.SLACK_BOT_TOKEN) {
    const { SlackAdapter } = await import("../adapters/slack/slack-adapter.js");
    adapters.push(
      new SlackAdapter({
        botToken: config.SLACK_BOT_TOKEN,
        // Unused in Socket Mode, where Slack's WebSocket replaces request signing.
        signingSecret: config.SLACK_SIGNING_SECRET ?? "",
        appToken: config.SLACK_APP_TOKEN,
        apiUrl: config.SLACK_API_URL,
        port: config.PORT,
        host: config.HOST,
        logger,
        routes,
      }),
    );
  }
  if (config.DISCORD_TOKEN && config.DISCORD_APPLICATION_ID) {
    const { DiscordAdapter } = await import("../adapters/discord/discord-adapter.js");
    adapters.push(
      new DiscordAdapter({
        token: config.DISCORD_TOKEN,
        applicationId: config.DISCORD_APPLICATION_ID,
        apiUrl: config.DISCORD_API_URL,
        guildId: config.DISCORD_GUILD_ID,
        messageContent: config.DISCORD_MESSAGE_CONTENT,
        logger,
      }),
    );
  }
  return adapters;
}

/** `/v1/asks` and `/mcp`; the routes exist before the engine (Slack's listener takes them), and reach it once built. */
function httpApiRoutes(api: () => AskApi | undefined, config: Config, logger: Logger): HttpRoute[] {
  const bound = () => {
    const engineApi = api();
    if (!engineApi) throw new Error("the API is not ready yet");
    return engineApi;
  };
  const options = { api: bound, rateLimit: new RateLimit(config.API_RATE_LIMIT), logger };
  return [...apiRoutes(options), mcpRoute(options)];
}

function settingsFrom(config: Config): EngineSettings {
  return {
    ...DEFAULT_SETTINGS,
    maxAskPerTurn: config.MAX_ASK_USER_PER_TURN,
    maxIterations: config.MAX_ITERATIONS,
    askTimeoutSeconds: config.ASK_TIMEOUT_S,
    answerPolicy: config.ANSWER_POLICY,
  };
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof StartError) process.stderr.write(`parley: ${error.message}\n`);
  else process.stderr.write(`parley: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
