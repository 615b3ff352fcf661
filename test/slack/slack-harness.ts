import { AnthropicModelClient } from "../../adapters/anthropic/anthropic-model-client.js";
import { apiRoutes } from "../../adapters/http/api-routes.js";
import { healthRoutes } from "../../adapters/http/health-routes.js";
import { mcpRoute } from "../../adapters/http/mcp-endpoint.js";
import { RateLimit } from "../../adapters/http/rate-limit.js";
import { SlackAdapter } from "../../adapters/slack/slack-adapter.js";
import { SqliteSessionStore } from "../../db/sqlite-session-store.js";
import { AdminCommands } from "../../src/admin/admin-commands.js";
import type { TokenHash } from "../../src/api/api-tokens.js";
import { Engine } from "../../src/engine/engine.js";
import { createRuntimeSettings, type EngineSettings, type RuntimeSettings } from "../../src/engine/settings.js";
import { createHealthProbe } from "../../src/health.js";
import { type Logger, SILENT_LOGGER } from "../../src/logger.js";
import type { ModelRetryPolicy } from "../../src/loop/call-model.js";
import type { Tool } from "../../src/loop/tools.js";
import type { CallbackSender } from "../../src/ports/ask-api.js";
import type { AdminHandler } from "../../src/ports/conversation.js";
import type { ToolProvider } from "../../src/ports/tool-provider.js";
import type { ToolRules } from "../../src/tools/tool-rules.js";
import { FakeAnthropic } from "../fakes/fake-anthropic.js";
import { FAKE_APP_TOKEN, FAKE_BOT_TOKEN, FakeSlackApi, type RecordedSlackCall } from "../fakes/fake-slack-api.js";
import { FAKE_SIGNING_SECRET, SlackRequestSender } from "../fakes/fake-slack-signer.js";
import { FakeSlackSocket } from "../fakes/fake-slack-socket.js";
import { tempDatabasePath } from "../support/harness.js";
import { type EngineCall, probeEngine } from "./engine-probe.js";

export const ALICE = "U_ALICE";
export const BOB = "U_BOB";
export const CAROL_ADMIN = "U_CAROL";

export interface SlackHarnessOptions {
  settings?: Partial<EngineSettings>;
  tools?: Tool[];
  /** Tools from MCP servers, and the policy rules in force. */
  toolProvider?: ToolProvider;
  toolRules?: ToolRules;
  clock?: () => number;
  socketMode?: boolean;
  /** The /parley handler; the real AdminCommands on this engine and store when absent, as main.ts wires it. */
  onCommand?: AdminHandler;
  /** ADMIN_USER_IDS: people the engine treats as admins whatever users.info says. */
  adminUserIds?: string[];
  /** Where the adapter and the engine log; silent by default. */
  logger?: Logger;
  /** How a busy model is waited out; the engine's default (5 min, real sleeps) when absent. */
  modelRetry?: Partial<ModelRetryPolicy>;
  /** API_TOKENS: the HTTP API and the MCP server are served on the Slack listener, as main.ts wires them. */
  apiTokens?: TokenHash[];
  apiRateLimit?: number;
  callbackSender?: CallbackSender;
  mcpProgressIntervalMs?: number;
}

/**
 * The whole Slack stack on loopback: the real Bolt app in a SlackAdapter, a real Engine on a temp SQLite file,
 * the real Anthropic SDK against FakeAnthropic, and the fake Slack Web API (plus a Socket Mode server).
 */
export class SlackHarness {
  readonly anthropic = new FakeAnthropic();
  readonly slack = new FakeSlackApi();
  readonly socket = new FakeSlackSocket();
  readonly database = tempDatabasePath();
  readonly engineCalls: EngineCall[] = [];
  store!: SqliteSessionStore;
  engine!: Engine;
  settings!: RuntimeSettings;
  adapter!: SlackAdapter;
  sender!: SlackRequestSender;

  constructor(private readonly options: SlackHarnessOptions = {}) {}

  async start(): Promise<this> {
    await this.anthropic.start();
    await this.slack.start();
    this.slack
      .addUser({ id: ALICE, name: "alice" })
      .addUser({ id: BOB, name: "bob" })
      .addUser({ id: CAROL_ADMIN, name: "carol", isAdmin: true });
    if (this.options.socketMode) {
      await this.socket.start();
      this.slack.socketUrl = this.socket.url;
    }
    await this.open();
    return this;
  }

  private async open(): Promise<void> {
    this.store = new SqliteSessionStore(this.database.path);
    this.settings = createRuntimeSettings(this.options.settings);
    this.adapter = new SlackAdapter({
      botToken: FAKE_BOT_TOKEN,
      signingSecret: FAKE_SIGNING_SECRET,
      ...(this.options.socketMode ? { appToken: FAKE_APP_TOKEN } : {}),
      apiUrl: this.slack.apiUrl,
      port: 0,
      host: "127.0.0.1",
      logger: this.options.logger ?? SILENT_LOGGER,
      retryConfig: { retries: 2, factor: 1, minTimeout: 5, maxTimeout: 5 },
      routes: [...healthRoutes(createHealthProbe({ ping: () => this.store.ping(), platforms: () => [this.adapter] })), ...this.apiRoutes()],
    });
    this.engine = new Engine({
      store: this.store,
      model: new AnthropicModelClient({ apiKey: "test-key", model: "claude-sonnet-5-5", baseURL: this.anthropic.url, maxRetries: 0 }),
      adapters: [this.adapter],
      logger: this.options.logger ?? SILENT_LOGGER,
      settings: this.settings,
      ...(this.options.tools ? { tools: this.options.tools } : {}),
      ...(this.options.toolProvider ? { toolProvider: this.options.toolProvider } : {}),
      ...(this.options.toolRules ? { toolRules: this.options.toolRules } : {}),
      ...(this.options.clock ? { clock: this.options.clock } : {}),
      ...(this.options.adminUserIds ? { adminUserIds: this.options.adminUserIds } : {}),
      ...(this.options.modelRetry ? { modelRetry: this.options.modelRetry } : {}),
      ...(this.options.apiTokens ? { apiTokens: this.options.apiTokens } : {}),
      ...(this.options.callbackSender ? { callbackSender: this.options.callbackSender } : {}),
    });
    const admin = new AdminCommands({
      engine: this.engine,
      store: this.store,
      settings: this.settings,
      ...(this.options.toolRules ? { toolRules: this.options.toolRules } : {}),
      ...(this.options.clock ? { clock: this.options.clock } : {}),
      ...(this.options.apiTokens ? { envTokenNames: this.options.apiTokens.map((token) => token.name) } : {}),
    });
    await this.adapter.start(probeEngine(this.engine, this.engineCalls), this.options.onCommand ?? ((request) => admin.run(request)));
    this.sender = new SlackRequestSender(`http://127.0.0.1:${this.adapter.port}`);
  }

  private apiRoutes() {
    const options = {
      api: () => this.engine.api,
      rateLimit: new RateLimit(this.options.apiRateLimit ?? 100_000),
      logger: this.options.logger ?? SILENT_LOGGER,
      ...(this.options.mcpProgressIntervalMs ? { progressIntervalMs: this.options.mcpProgressIntervalMs } : {}),
    };
    return [...apiRoutes(options), mcpRoute(options)];
  }

  /** The base URL of the Slack listener, where the API is served too. */
  get baseUrl(): string {
    return `http://127.0.0.1:${this.adapter.port}`;
  }

  /** A restart: adapter and engine go away; new ones open the same database file and recover. */
  async restart(): Promise<void> {
    await this.engine.idle();
    await this.adapter.stop();
    await this.store.close();
    await this.open();
    await this.engine.recover();
    await this.engine.idle();
  }

  async close(): Promise<void> {
    await this.engine.idle();
    await this.adapter.stop();
    await this.store.close();
    await this.anthropic.close();
    await this.slack.close();
    await this.socket.close();
    this.database.cleanup();
  }

  /** Waits until the engine has answered `count` calls of `method` in all, then until its background work is done. */
  async settle(method: EngineCall["method"], count: number): Promise<EngineCall[]> {
    await this.calls(method, count);
    await this.engine.idle();
    return this.engineCalls.filter((call) => call.method === method);
  }

  /** Waits until the engine has answered `count` calls of `method`, without waiting for the turns they started. */
  async calls(method: EngineCall["method"], count: number): Promise<EngineCall[]> {
    await waitFor(() => this.engineCalls.filter((call) => call.method === method).length >= count, `${count} engine ${method} call(s)`);
    return this.engineCalls.filter((call) => call.method === method);
  }

  /** Posted messages (not updates) in a thread. */
  posted(thread: string): RecordedSlackCall[] {
    return this.slack.callsOf("chat.postMessage").filter((call) => call.ok && call.params.thread_ts === thread);
  }

  /**
   * Every message of a thread as the bot last drew it: posted, then edited (a status line edited into a card or the
   * answer), oldest first.
   */
  drawn(thread: string): Array<{ ts: string; params: Record<string, unknown> }> {
    const latest = new Map<string, Record<string, unknown>>();
    for (const call of this.slack.calls) {
      if (!call.ok) continue;
      if (call.method === "chat.postMessage" && call.params.thread_ts === thread) latest.set(String(call.result.ts), call.params);
      else if (call.method === "chat.update" && latest.has(String(call.params.ts))) latest.set(String(call.params.ts), call.params);
    }
    return [...latest].map(([ts, params]) => ({ ts, params }));
  }

  /** The newest card (a message posted with ask controls, or a status line edited into one) in a thread. */
  card(thread: string): PostedCard {
    const inThread = new Set(this.drawn(thread).map((message) => message.ts));
    const calls = this.slack.calls.filter(
      (call) =>
        call.ok &&
        ((call.method === "chat.postMessage" && call.params.thread_ts === thread) ||
          (call.method === "chat.update" && inThread.has(String(call.params.ts)))),
    );
    const call = calls.reverse().find((entry) => actionIdsOf(entry.params.blocks).some((id) => id.startsWith("ask:")));
    if (!call) throw new Error(`no card in thread ${thread}`);
    const actionIds = actionIdsOf(call.params.blocks);
    const askId = actionIds[0]?.split(":")[1] ?? "";
    return {
      ts: String(call.method === "chat.update" ? call.params.ts : call.result.ts),
      askId,
      actionIds,
      blocks: call.params.blocks as Array<Record<string, unknown>>,
      text: String(call.params.text),
    };
  }

  /** The text of the newest `chat.update` of the message with this ts. */
  updatesOf(ts: string): RecordedSlackCall[] {
    return this.slack.callsOf("chat.update").filter((call) => call.params.ts === ts);
  }

  /** Waits for `count` private notices to `user` (they are sent after the engine call returns). */
  async noticesTo(user: string, count: number): Promise<string[]> {
    await waitFor(() => this.ephemerals(user).length >= count, `${count} ephemeral notice(s) to ${user}`);
    return this.ephemerals(user);
  }

  ephemerals(user: string): string[] {
    return this.slack
      .callsOf("chat.postEphemeral")
      .filter((call) => call.params.user === user)
      .map((call) => String(call.params.text));
  }

  get responseUrl(): string {
    return `${this.slack.url}/respond/${Math.random().toString(36).slice(2)}`;
  }
}

export interface PostedCard {
  ts: string;
  askId: string;
  actionIds: string[];
  blocks: Array<Record<string, unknown>>;
  text: string;
}

export function actionIdsOf(blocks: unknown): string[] {
  if (!Array.isArray(blocks)) return [];
  return blocks.flatMap((block: { type?: string; elements?: Array<{ action_id?: string }> }) =>
    block.type === "actions" ? (block.elements ?? []).map((element) => element.action_id ?? "") : [],
  );
}

/** Polls until `condition` holds; fails with `what` after five seconds. Synchronisation only, never a timing assertion. */
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
