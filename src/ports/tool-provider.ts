import type { ImageBlock, TextBlock } from "./model-client.js";

/** What a tool's server says about it (MCP annotations); hints, never trusted for authorization. */
export interface ToolHints {
  readOnly?: boolean;
  destructive?: boolean;
  idempotent?: boolean;
}

/** A tool offered by a provider (an MCP server), under the name the model sees: `<server>__<tool>`. */
export interface ProvidedTool {
  /** The exposed name, fitted to `^[a-zA-Z0-9_-]{1,64}$` and unique across servers. */
  name: string;
  /** The server's configured name. */
  server: string;
  /** The tool's own name on its server. */
  remoteName: string;
  description: string;
  inputSchema: Record<string, unknown>;
  hints: ToolHints;
}

/** One field of an elicitation form, already narrowed to what a card can draw. */
export interface ElicitationField {
  name: string;
  label: string;
  type: "string" | "number" | "integer" | "boolean";
  /** `enum` of a string field: drawn as a select. */
  options?: string[];
  required: boolean;
  default?: string | number | boolean;
}

/** A server asking the people for input during a call (`elicitation/create`). */
export interface ElicitationRequest {
  message: string;
  fields: ElicitationField[];
  /**
   * Aborts when the form is no longer wanted (the call ended, timed out or was cancelled, or the server withdrew
   * the request): take the card down. Optional for fakes; McpToolProvider always sets it.
   */
  signal?: AbortSignal;
}

export type ElicitationResponse =
  | { action: "accept"; content: Record<string, string | number | boolean> }
  | { action: "decline" }
  | { action: "cancel" };

export interface ToolCallRequest {
  /** The exposed name. */
  name: string;
  input: Record<string, unknown>;
  /** Aborted by the caller (Stop): the call is cancelled on the server, as it is on the provider's own timeout. */
  signal: AbortSignal;
  /** Progress from the server, as one short line. */
  onProgress?: ((text: string) => void) | undefined;
  /** Answers a server's elicitation; absent, every elicitation is declined. */
  onElicitation?: ((request: ElicitationRequest) => Promise<ElicitationResponse>) | undefined;
}

/** A tool's result, mapped to Messages API blocks, cut to the configured size. */
export interface ToolOutput {
  content: Array<TextBlock | ImageBlock>;
  isError: boolean;
}

export type ServerState = "starting" | "ready" | "failed" | "stopped";

export interface ServerStatus {
  name: string;
  state: ServerState;
  /** Why it failed or restarts, one line, no secrets. */
  detail?: string;
  toolCount: number;
}

/** Tools from outside the process (MCP servers). The core sees only this port, never the MCP SDK. */
export interface ToolProvider {
  /** Starts every server; resolves once each has listed its tools or failed (never rejects). */
  start(): Promise<void>;
  /** The tools available now, from every ready server. */
  list(): ProvidedTool[];
  /** Each configured server, its state and its tool count. */
  status(): ServerStatus[];
  /** Calls a tool; failures of the tool or its server come back as `isError` output, never as a throw. */
  call(request: ToolCallRequest): Promise<ToolOutput>;
  /** Called whenever the tool list changes (a server's list_changed, a restart). Returns an unsubscribe. */
  onToolsChanged(listener: () => void): () => void;
  /** Stops every server. */
  close(): Promise<void>;
}
