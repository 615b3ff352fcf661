import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ElicitRequestSchema, type Tool, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../../src/ports/logger.js";
import type { ServerState, ServerStatus, ToolCallRequest, ToolOutput } from "../../src/ports/tool-provider.js";
import { type CallLimits, callTool } from "./call-tool.js";
import { createTransport } from "./create-transport.js";
import { failureDetail, secretsOf } from "./failure-detail.js";
import type { McpServerConfig } from "./mcp-config.js";
import { type RestartBackoff, restartDelayMs } from "./restart-backoff.js";
import { type CallInFlight, routeElicitation } from "./route-elicitation.js";

/** A buggy server could page forever. */
const MAX_TOOL_PAGES = 100;

/** What one server connection needs; the provider builds it from its own options. */
export interface McpServerConnectionOptions {
  name: string;
  config: McpServerConfig;
  logger: Logger;
  clientInfo: { name: string; version: string };
  /** Where a stdio server's PATH and HOME come from. */
  parentEnvironment: Readonly<Record<string, string | undefined>>;
  startTimeoutMs: number;
  restartBackoff: RestartBackoff;
  /** Called whenever this server's tools may have changed (ready, failed, list_changed). */
  onToolsChanged: () => void;
}

/**
 * One configured MCP server: connects, lists its tools, calls them, and starts again with backoff after it
 * fails or dies. Never throws; what went wrong is in `status()`.
 */
export class McpServerConnection {
  private state: ServerState = "starting";
  private detail: string | undefined;
  private client: Client | undefined;
  private knownTools: Tool[] = [];
  private restartAttempt = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private closing = false;
  private readonly calls = new Set<CallInFlight>();
  private readonly secrets: string[];

  constructor(private readonly options: McpServerConnectionOptions) {
    this.secrets = secretsOf(options.config);
  }

  /** The server's configured name. */
  get name(): string {
    return this.options.name;
  }

  /** Whether calls can be sent now. */
  get ready(): boolean {
    return this.state === "ready";
  }

  /** The tools of the last listing; kept while the server is down, so names stay put and calls say why they fail. */
  get tools(): readonly Tool[] {
    return this.knownTools;
  }

  /** Its state for `/parley tools`. */
  status(): ServerStatus {
    const status: ServerStatus = { name: this.name, state: this.state, toolCount: this.ready ? this.knownTools.length : 0 };
    if (this.detail !== undefined) status.detail = this.detail;
    return status;
  }

  /** Connects once; on failure, schedules the next attempt. Never rejects. */
  async start(): Promise<void> {
    if (this.closing) return;
    const { name, config, logger, clientInfo } = this.options;
    const client = new Client(clientInfo, { capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler(ElicitRequestSchema, (request, extra) =>
      routeElicitation(name, request.params, [...this.calls], extra.signal, logger),
    );
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.refreshTools(client));
    client.onerror = (error) => logger.debug({ server: name, error: failureDetail(error, this.secrets) }, "mcp transport error");
    client.onclose = () => this.lost(client, "the server stopped (its process exited or the connection closed)");
    this.client = client;
    try {
      await client.connect(createTransport(name, config, this.options.parentEnvironment, logger), {
        timeout: this.options.startTimeoutMs,
      });
      const tools = await listAllTools(client);
      if (this.client !== client) return;
      this.knownTools = tools;
      this.state = "ready";
      this.detail = undefined;
      this.restartAttempt = 0;
      logger.info({ server: name, tools: tools.length }, "mcp server ready");
      this.options.onToolsChanged();
    } catch (error) {
      if (this.client !== client) return;
      this.client = undefined;
      await client.close().catch(() => {});
      this.fail(failureDetail(error, this.secrets));
    }
  }

  /** Calls one of this server's tools; every failure is `isError` output. */
  async call(remoteName: string, request: ToolCallRequest, limits: CallLimits): Promise<ToolOutput> {
    const client = this.client;
    if (!this.ready || client === undefined) {
      const why = this.detail === undefined ? this.state : `${this.state}: ${this.detail}`;
      return {
        content: [{ type: "text", text: `server ${this.name} is not ready (${why}); tool ${request.name} was not run` }],
        isError: true,
      };
    }
    const ended = new AbortController();
    const inFlight: CallInFlight = { request, ended: ended.signal };
    this.calls.add(inFlight);
    try {
      const outcome = await callTool(client, this.name, remoteName, request, limits);
      if (outcome.connectionLost) this.lost(client, "the connection failed during a call");
      return outcome.output;
    } finally {
      this.calls.delete(inFlight);
      ended.abort();
    }
  }

  /** Stops the server for good: closes the client (a stdio process is ended) and cancels any pending restart. */
  async close(): Promise<void> {
    this.closing = true;
    clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    this.state = "stopped";
    this.detail = undefined;
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => {});
  }

  private async refreshTools(client: Client): Promise<void> {
    try {
      const tools = await listAllTools(client);
      if (this.client !== client || !this.ready) return;
      this.knownTools = tools;
      this.options.logger.info({ server: this.name, tools: tools.length }, "mcp server tools changed");
      this.options.onToolsChanged();
    } catch (error) {
      this.options.logger.warn({ server: this.name, error: failureDetail(error, this.secrets) }, "mcp tools refresh failed");
    }
  }

  /**
   * The live connection is gone: forget it and start again later. Ignores clients already replaced, and clients
   * still connecting (a failed `initialize` also closes the transport; `start` reports that failure itself).
   */
  private lost(client: Client, detail: string): void {
    if (this.client !== client || this.closing || this.state !== "ready") return;
    this.client = undefined;
    void client.close().catch(() => {});
    const hadTools = this.knownTools.length > 0;
    this.fail(detail);
    if (hadTools) this.options.onToolsChanged();
  }

  private fail(detail: string): void {
    if (this.closing) return;
    const delayMs = restartDelayMs(this.options.restartBackoff, this.restartAttempt);
    this.restartAttempt += 1;
    this.state = "failed";
    this.detail = `${detail}; next try in ${Math.ceil(delayMs / 1000)} s`;
    this.options.logger.warn({ server: this.name, detail, retryInMs: delayMs }, "mcp server failed");
    clearTimeout(this.restartTimer);
    // Unref'd: a pending restart never keeps the process alive on its own.
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      void this.start();
    }, delayMs).unref();
  }
}

async function listAllTools(client: Client): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_TOOL_PAGES; page += 1) {
    const result = await client.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (cursor === undefined) break;
  }
  return tools;
}
