/** Message shapes of the Messages API, owned by the core so it never imports the SDK. */
export interface TextBlock {
  type: "text";
  text: string;
}

export interface ImageBlock {
  type: "image";
  source: { type: "base64"; media_type: string; data: string };
}

export interface ToolUseBlock {
  type: "tool_use";
  id: string;
  name: string;
  input: unknown;
}

export interface ToolResultBlock {
  type: "tool_result";
  tool_use_id: string;
  /** JSON or plain text for Parley's own tools; text and image blocks for tools from MCP servers. */
  content: string | Array<TextBlock | ImageBlock>;
  is_error?: boolean;
}

export type ContentBlock = TextBlock | ToolUseBlock | ToolResultBlock;

export interface ChatMessage {
  role: "user" | "assistant";
  content: ContentBlock[];
}

export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** How long the provider keeps the prompt prefix this request writes to its cache: 5 minutes or an hour. */
export type CacheTtl = "5m" | "1h";

export interface ModelRequest {
  system: string;
  tools: ToolDefinition[];
  messages: ChatMessage[];
  maxTokens: number;
  /**
   * The lifetime of every cache breakpoint of this request; "5m" when absent. The core predicts it per request
   * (`src/loop/cache-ttl.ts`): the next request reads what this one writes, and after an ask that may be an hour away.
   */
  cacheTtl?: CacheTtl;
}

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export interface ModelResponse {
  content: Array<TextBlock | ToolUseBlock>;
  stopReason: string;
  usage: TokenUsage;
}

/** The model provider, behind a port so the loop can run against a scripted model in tests and benches. */
export interface ModelClient {
  /**
   * Sends one request; throws ModelError (transient or permanent) once the provider has failed after the
   * client's own quick retries. Waiting longer on a busy provider is the core's job, not the client's.
   */
  createMessage(request: ModelRequest, signal?: AbortSignal): Promise<ModelResponse>;
}

export const ZERO_USAGE: TokenUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
