import { AnthropicModelClient } from "../../adapters/anthropic/anthropic-model-client.js";
import { DiscordAdapter } from "../../adapters/discord/discord-adapter.js";
import { SqliteSessionStore } from "../../db/sqlite-session-store.js";
import { AdminCommands } from "../../src/admin/admin-commands.js";
import type { TokenHash } from "../../src/api/api-tokens.js";
import { Engine } from "../../src/engine/engine.js";
import { createRuntimeSettings, type EngineSettings, type RuntimeSettings } from "../../src/engine/settings.js";
import { createLogger, type Logger, SILENT_LOGGER } from "../../src/logger.js";
import type { AdminHandler } from "../../src/ports/conversation.js";
import type { ToolProvider } from "../../src/ports/tool-provider.js";
import type { ToolRules } from "../../src/tools/tool-rules.js";
import { FakeAnthropic } from "../fakes/fake-anthropic.js";
import { FAKE_DISCORD_TOKEN, FakeDiscord, type FakeUser } from "../fakes/fake-discord.js";
import { snowflake } from "../fakes/fake-discord-payloads.js";
import { tempDatabasePath } from "../support/harness.js";

type Json = Record<string, unknown>;

export const ALICE: FakeUser = { id: snowflake(), username: "alice" };
export const BOB: FakeUser = { id: snowflake(), username: "bob" };
export const ADMIN: FakeUser = { id: snowflake(), username: "root", admin: true };
export const OTHER_BOT: FakeUser = { id: snowflake(), username: "otherbot", bot: true };

export interface HarnessOptions {
  messageContent?: boolean;
  settings?: Partial<EngineSettings>;
  /** Tools from MCP servers, and the policy rules in force. */
  toolProvider?: ToolProvider;
  toolRules?: ToolRules;
  /** The /parley handler; the real AdminCommands on this engine and store when absent, as main.ts wires it. */
  onCommand?: AdminHandler;
  /** ADMIN_USER_IDS: people the engine treats as admins whatever their Discord permissions. */
  adminUserIds?: string[];
  /** Where the adapter and the engine log; silent unless DEBUG_DISCORD is set. */
  logger?: Logger;
  /**
   * API_TOKENS: the engine takes asks from other programs. Nothing is mounted (the harness has no HTTP listener):
   * tests call `engine.api`, the port the HTTP routes and the MCP server call.
   */
  apiTokens?: TokenHash[];
}

/** Real discord.js, the fake Discord API and gateway, the fake Anthropic API and a real Engine on a SQLite file. */
export class DiscordHarness {
  readonly anthropic = new FakeAnthropic();
  readonly discord = new FakeDiscord();
  readonly database = tempDatabasePath();
  /** The engine's clock; tests move it forward to expire asks. */
  now = Date.now();
  store!: SqliteSessionStore;
  engine!: Engine;
  settings!: RuntimeSettings;
  adapter!: DiscordAdapter;

  constructor(private readonly options: HarnessOptions = {}) {}

  async start(): Promise<this> {
    await this.anthropic.start();
    await this.discord.start();
    await this.open();
    return this;
  }

  private async open(): Promise<void> {
    this.store = new SqliteSessionStore(this.database.path);
    this.settings = createRuntimeSettings(this.options.settings);
    this.adapter = new DiscordAdapter({
      token: FAKE_DISCORD_TOKEN,
      applicationId: this.discord.applicationId,
      apiUrl: this.discord.url,
      logger: this.options.logger ?? (process.env.DEBUG_DISCORD ? createLogger("debug") : SILENT_LOGGER),
      ...(this.options.messageContent === false ? { messageContent: false } : {}),
    });
    this.engine = new Engine({
      store: this.store,
      model: new AnthropicModelClient({ apiKey: "test-key", model: "claude-sonnet-5-5", baseURL: this.anthropic.url, maxRetries: 0 }),
      adapters: [this.adapter],
      logger: this.options.logger ?? (process.env.DEBUG_DISCORD ? createLogger("debug") : SILENT_LOGGER),
      settings: this.settings,
      clock: () => this.now,
      ...(this.options.toolProvider ? { toolProvider: this.options.toolProvider } : {}),
      ...(this.options.toolRules ? { toolRules: this.options.toolRules } : {}),
      ...(this.options.adminUserIds ? { adminUserIds: this.options.adminUserIds } : {}),
      ...(this.options.apiTokens ? { apiTokens: this.options.apiTokens } : {}),
    });
    const admin = new AdminCommands({
      engine: this.engine,
      store: this.store,
      settings: this.settings,
      clock: () => this.now,
      ...(this.options.toolRules ? { toolRules: this.options.toolRules } : {}),
    });
    await this.adapter.start(this.engine, this.options.onCommand ?? ((request) => admin.run(request)));
  }

  /** A process restart: the adapter disconnects, the store closes, everything is built again on the same file. */
  /** Stops the bot, runs `whileDown` (people keep writing), and starts it again on the same database. */
  async restart(whileDown?: () => void): Promise<void> {
    await this.quiet();
    await this.adapter.stop();
    await this.store.close();
    whileDown?.();
    await this.open();
    await this.engine.recover();
    await this.quiet();
  }

  /** Waits until every received event, turn, card and settle has finished. */
  async quiet(): Promise<void> {
    for (let round = 0; round < 3; round++) {
      await this.adapter.idle();
      await this.engine.idle();
    }
  }

  /** Polls until the condition holds (events travel over a real socket), then waits for quiet unless told not to. */
  async until<T>(what: string, probe: () => T | undefined | false, options: { quiet?: boolean } = {}): Promise<T> {
    for (let attempt = 0; attempt < 1000; attempt++) {
      const value = probe();
      if (value !== undefined && value !== false) {
        if (options.quiet !== false) await this.quiet();
        return value;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  /** Mentions the bot in the channel and waits for the thread the bot starts from that message. */
  async mention(user: FakeUser, text: string, options: { quiet?: boolean } = {}): Promise<string> {
    const messageId = this.discord.say(user, text, { mentionBot: true });
    return this.until("the thread", () => this.discord.threadIds().find((id) => id === messageId), options);
  }

  /** Waits for an open card (a message with ask components) in a channel, other than `except`. */
  async card(channelId: string, except?: Json): Promise<Json> {
    return this.until("a card", () =>
      this.discord
        .botMessagesIn(channelId)
        .find((message) => message.id !== except?.id && customIds(message).some((id) => id.startsWith("ask:"))),
    );
  }

  /** Waits for a bot message in the channel whose content matches. */
  async botSays(channelId: string, pattern: RegExp): Promise<Json> {
    return this.until(`a message matching ${pattern}`, () =>
      this.discord.botMessagesIn(channelId).find((message) => pattern.test(String(message.content))),
    );
  }

  async close(): Promise<void> {
    await this.quiet();
    await this.adapter.stop();
    await this.store.close();
    await this.discord.close();
    await this.anthropic.close();
    this.database.cleanup();
  }
}

/** Every custom_id on a message, row by row. */
export function customIds(message: Json): string[] {
  const rows = (message.components ?? []) as Array<{ components?: Array<{ custom_id?: string }> }>;
  return rows.flatMap((row) => (row.components ?? []).map((component) => component.custom_id ?? ""));
}

export function componentWith(message: Json, customIdPattern: RegExp): { custom_id: string; label?: string; options?: Json[] } {
  const rows = (message.components ?? []) as Array<{ components?: Array<{ custom_id: string; label?: string; options?: Json[] }> }>;
  const found = rows.flatMap((row) => row.components ?? []).find((component) => customIdPattern.test(component.custom_id));
  if (!found) throw new Error(`no component matching ${customIdPattern} on message ${String(message.id)}`);
  return found;
}
