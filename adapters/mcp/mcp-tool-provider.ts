import type { Logger } from "../../src/ports/logger.js";
import type { ProvidedTool, ServerStatus, ToolCallRequest, ToolHints, ToolOutput, ToolProvider } from "../../src/ports/tool-provider.js";
import type { CallLimits } from "./call-tool.js";
import type { McpServersConfig } from "./mcp-config.js";
import { McpServerConnection } from "./mcp-server-connection.js";
import { DEFAULT_RESTART_BACKOFF, type RestartBackoff } from "./restart-backoff.js";
import { assignToolNames } from "./tool-names.js";

/** Two minutes, as DESIGN §11's `TOOL_TIMEOUT_S` default. */
export const DEFAULT_TOOL_TIMEOUT_MS = 120_000;
/** As DESIGN §11's `TOOL_RESULT_MAX_CHARS` default. */
export const DEFAULT_MAX_RESULT_CHARS = 50_000;
/** How long a server has to answer `initialize` and list its tools. */
export const DEFAULT_START_TIMEOUT_MS = 30_000;

export interface McpToolProviderOptions {
  /** Every server, as `parseMcpConfig` / `loadMcpConfig` return them. */
  servers: McpServersConfig;
  logger: Logger;
  /** Past this a call is cancelled, progress or not (default 120 s). */
  toolTimeoutMs?: number;
  /** The text of a result is cut past this many characters (default 50 000). */
  maxResultChars?: number;
  startTimeoutMs?: number;
  restartBackoff?: RestartBackoff;
  /** Where a stdio server's PATH and HOME come from (default `process.env`). */
  parentEnvironment?: Readonly<Record<string, string | undefined>>;
  /** Sent to servers as the client's version (its name is always `parley`). */
  clientVersion?: string;
}

interface ToolEntry {
  tool: ProvidedTool;
  connection: McpServerConnection;
}

/** The ToolProvider on MCP servers, through the official SDK's client. */
export class McpToolProvider implements ToolProvider {
  private readonly connections: McpServerConnection[];
  private readonly listeners = new Set<() => void>();
  private readonly limits: CallLimits;
  private entries = new Map<string, ToolEntry>();

  constructor(private readonly options: McpToolProviderOptions) {
    this.limits = {
      timeoutMs: options.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
      maxResultChars: options.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS,
    };
    this.connections = Object.entries(options.servers).map(
      ([name, config]) =>
        new McpServerConnection({
          name,
          config,
          logger: options.logger,
          clientInfo: { name: "parley", version: options.clientVersion ?? "0.1.0" },
          parentEnvironment: options.parentEnvironment ?? process.env,
          startTimeoutMs: options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS,
          restartBackoff: options.restartBackoff ?? DEFAULT_RESTART_BACKOFF,
          onToolsChanged: () => this.toolsChanged(),
        }),
    );
  }

  async start(): Promise<void> {
    await Promise.all(this.connections.map((connection) => connection.start()));
  }

  list(): ProvidedTool[] {
    return [...this.entries.values()].filter((entry) => entry.connection.ready).map((entry) => entry.tool);
  }

  status(): ServerStatus[] {
    return this.connections.map((connection) => connection.status());
  }

  async call(request: ToolCallRequest): Promise<ToolOutput> {
    const entry = this.entries.get(request.name);
    if (!entry) return { content: [{ type: "text", text: `unknown tool ${request.name}` }], isError: true };
    return entry.connection.call(entry.tool.remoteName, request, this.limits);
  }

  onToolsChanged(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    await Promise.all(this.connections.map((connection) => connection.close()));
    this.listeners.clear();
  }

  /**
   * Names are assigned over the last listing of every server, ready or not, so a server going down and back
   * does not rename the others' tools.
   */
  private toolsChanged(): void {
    const known = this.connections.flatMap((connection) => connection.tools.map((tool) => ({ connection, tool })));
    const names = assignToolNames(known.map(({ connection, tool }) => ({ server: connection.name, tool: tool.name })));
    this.entries = new Map(
      known.map(({ connection, tool }, index) => {
        const name = names[index]!;
        const provided: ProvidedTool = {
          name,
          server: connection.name,
          remoteName: tool.name,
          description: tool.description ?? tool.title ?? "",
          inputSchema: tool.inputSchema,
          hints: hintsOf(tool.annotations),
        };
        return [name, { tool: provided, connection }];
      }),
    );
    for (const listener of this.listeners) {
      try {
        listener();
      } catch (error) {
        this.options.logger.error({ error: error instanceof Error ? error.message : String(error) }, "tools-changed listener failed");
      }
    }
  }
}

function hintsOf(
  annotations:
    | { readOnlyHint?: boolean | undefined; destructiveHint?: boolean | undefined; idempotentHint?: boolean | undefined }
    | undefined,
): ToolHints {
  const hints: ToolHints = {};
  if (annotations?.readOnlyHint !== undefined) hints.readOnly = annotations.readOnlyHint;
  if (annotations?.destructiveHint !== undefined) hints.destructive = annotations.destructiveHint;
  if (annotations?.idempotentHint !== undefined) hints.idempotent = annotations.idempotentHint;
  return hints;
}
