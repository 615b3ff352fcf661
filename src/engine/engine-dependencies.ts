import type { TokenHash } from "../api/api-tokens.js";
import type { Logger } from "../logger.js";
import type { ModelRetryPolicy } from "../loop/call-model.js";
import type { LoopResult } from "../loop/run-loop.js";
import type { Tool } from "../loop/tools.js";
import type { ApiStore } from "../ports/api-store.js";
import type { CallbackSender } from "../ports/ask-api.js";
import type { MaintenanceStore } from "../ports/maintenance-store.js";
import type { ModelClient } from "../ports/model-client.js";
import type { PlatformAdapter } from "../ports/platform-adapter.js";
import type { SessionStore } from "../ports/session-store.js";
import type { StoreChanges } from "../ports/store-changes.js";
import type { ToolProvider } from "../ports/tool-provider.js";
import type { ToolRules } from "../tools/tool-rules.js";
import type { RuntimeSettings } from "./settings.js";

/** What the composition root gives the Engine: the store, the model, the platforms, and the knobs. */
export interface EngineDependencies {
  store: SessionStore & MaintenanceStore & ApiStore;
  /** Stops and answers other processes commit, told at once; without it they are seen at the next poll (1 s). */
  changes?: StoreChanges;
  model: ModelClient;
  adapters: PlatformAdapter[];
  logger: Logger;
  /** Parley's own tools (current_time). */
  tools?: Tool[];
  /** Tools from MCP servers. */
  toolProvider?: ToolProvider | undefined;
  /** Policy rules in force (TOOL_POLICY and admins'); read-only tools run, others ask, when absent. */
  toolRules?: ToolRules;
  /** How long a server's elicitation form may wait (TOOL_TIMEOUT_S: the call that asked lives no longer). */
  toolTimeoutSeconds?: number;
  /** The system prompt, the team's instructions included. */
  systemPrompt?: string;
  settings?: RuntimeSettings;
  adminUserIds?: string[];
  /** API_TOKENS, hashed: the tokens the HTTP API and the MCP server accept besides the ones admins create. */
  apiTokens?: TokenHash[];
  /** Sends API callbacks; without it, asks' callback URLs wait in the outbox. */
  callbackSender?: CallbackSender | undefined;
  clock?: () => number;
  /** How a busy model is waited out (MODEL_RETRY_MAX_S); tests give a sleep that takes no time. */
  modelRetry?: Partial<ModelRetryPolicy>;
  /** Observes every turn's result (tests, benches). */
  onTurnEnd?: (sessionId: string, result: LoopResult) => void;
}
