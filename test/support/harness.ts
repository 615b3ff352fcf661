import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { AnthropicModelClient } from "../../adapters/anthropic/anthropic-model-client.js";
import { SqliteSessionStore } from "../../db/sqlite-session-store.js";
import { Engine } from "../../src/engine/engine.js";
import { createRuntimeSettings, type EngineSettings, type RuntimeSettings } from "../../src/engine/settings.js";
import type { Logger } from "../../src/logger.js";
import { SILENT_LOGGER } from "../../src/logger.js";
import type { ModelRetryPolicy } from "../../src/loop/call-model.js";
import type { LoopResult } from "../../src/loop/run-loop.js";
import type { Tool } from "../../src/loop/tools.js";
import type { InboundMessage } from "../../src/ports/conversation.js";
import type { ConversationRef } from "../../src/ports/session-store.js";
import type { ToolProvider } from "../../src/ports/tool-provider.js";
import type { ToolRules } from "../../src/tools/tool-rules.js";
import { FakeAnthropic } from "../fakes/fake-anthropic.js";
import { RecordingAdapter } from "../fakes/recording-adapter.js";

export const CONVERSATION: ConversationRef = { platform: "slack", workspace: "T1", channel: "C1", thread: "1700000000.000100" };
export const OWNER = { id: "U_OWNER", name: "alice" };

export function tempDatabasePath(): { path: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "parley-test-"));
  return { path: join(dir, "parley.db"), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A real engine on a SQLite file, the real Anthropic SDK against the fake, and a recording adapter. */
export class EngineHarness {
  readonly adapter = new RecordingAdapter();
  store!: SqliteSessionStore;
  engine!: Engine;
  settings!: RuntimeSettings;
  /** Every turn's result, in order. */
  readonly turnResults: LoopResult[] = [];
  private eventCounter = 0;

  constructor(
    readonly fake: FakeAnthropic,
    readonly databasePath: string,
    private readonly options: {
      settings?: Partial<EngineSettings>;
      tools?: Tool[];
      toolProvider?: ToolProvider;
      toolRules?: ToolRules;
      /** The whole system prompt, as main.ts builds it; Parley's own when absent. */
      systemPrompt?: string;
      logger?: Logger;
      clock?: () => number;
      /** Off unless a test sets it: a model failure then fails the turn at once instead of waiting minutes. */
      modelRetry?: Partial<ModelRetryPolicy>;
      /** The SDK's own quick retries; 0 unless a test wants them, so each scripted failure is one request. */
      sdkMaxRetries?: number;
    } = {},
  ) {
    this.open();
  }

  open(): void {
    this.store = new SqliteSessionStore(this.databasePath);
    this.settings = createRuntimeSettings(this.options.settings);
    this.engine = new Engine({
      store: this.store,
      model: new AnthropicModelClient({
        apiKey: "test-key",
        model: "claude-sonnet-5-5",
        baseURL: this.fake.url,
        maxRetries: this.options.sdkMaxRetries ?? 0,
      }),
      adapters: [this.adapter],
      logger: this.options.logger ?? SILENT_LOGGER,
      settings: this.settings,
      onTurnEnd: (_sessionId, result) => this.turnResults.push(result),
      ...(this.options.tools ? { tools: this.options.tools } : {}),
      ...(this.options.toolProvider ? { toolProvider: this.options.toolProvider } : {}),
      ...(this.options.toolRules ? { toolRules: this.options.toolRules } : {}),
      ...(this.options.systemPrompt !== undefined ? { systemPrompt: this.options.systemPrompt } : {}),
      ...(this.options.clock ? { clock: this.options.clock } : {}),
      modelRetry: this.options.modelRetry ?? { maxWaitMs: 0 },
      adminUserIds: ["U_ADMIN"],
    });
  }

  /**
   * Simulates a restart: the old engine is dropped, a new one opens the same file. `toolRules` are the new process's
   * rules, built from what it finds stored, as main.ts builds them; the old ones are kept when absent.
   */
  async restart(next: { toolRules?: (stored: Record<string, string>) => ToolRules } = {}): Promise<void> {
    await this.engine.idle();
    await this.store.close();
    if (next.toolRules) {
      const reader = new SqliteSessionStore(this.databasePath);
      this.options.toolRules = next.toolRules(await reader.loadSettings());
      await reader.close();
    }
    this.open();
    await this.engine.recover();
    await this.engine.idle();
  }

  async say(text: string, overrides: Partial<InboundMessage> = {}): Promise<string> {
    const outcome = await this.engine.handleMessage({
      eventId: `Ev${++this.eventCounter}`,
      conversation: CONVERSATION,
      author: OWNER,
      text,
      addressedToBot: true,
      ...overrides,
    });
    await this.engine.idle();
    return outcome;
  }

  lastCard() {
    const card = this.adapter.cards.at(-1);
    if (!card) throw new Error("no card was posted");
    return card;
  }

  async close(): Promise<void> {
    await this.engine.idle();
    await this.store.close();
  }
}

/** A fake model, a temp database and an engine harness on them, fresh for every test of the calling file. */
export function freshHarnessPerTest(): { fake: FakeAnthropic; database: ReturnType<typeof tempDatabasePath>; harness: EngineHarness } {
  const setup = {} as { fake: FakeAnthropic; database: ReturnType<typeof tempDatabasePath>; harness: EngineHarness };
  beforeEach(async () => {
    setup.fake = await new FakeAnthropic().start();
    setup.database = tempDatabasePath();
    setup.harness = new EngineHarness(setup.fake, setup.database.path);
  });
  afterEach(async () => {
    await setup.harness.close();
    await setup.fake.close();
    setup.database.cleanup();
  });
  return setup;
}
