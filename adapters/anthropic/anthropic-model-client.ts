import Anthropic from "@anthropic-ai/sdk";
import type { ModelClient, ModelRequest, ModelResponse, TextBlock, ToolUseBlock } from "../../src/ports/model-client.js";
import { toModelError } from "./to-model-error.js";

export interface AnthropicModelClientOptions {
  apiKey: string;
  model: string;
  baseURL?: string | undefined;
  maxRetries?: number;
  timeoutMs?: number;
}

/**
 * The cache_control of every breakpoint of one request. One lifetime for all three (last tool, system, last
 * message) keeps the API's rule that a longer-lived breakpoint never follows a shorter one in the prompt's order
 * (tools, then system, then messages). "5m" is the API's default and is sent without a `ttl`, as before.
 */
function cacheControl(ttl: ModelRequest["cacheTtl"]): Anthropic.CacheControlEphemeral {
  return ttl === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" };
}

/** The ModelClient on the real Anthropic SDK: streaming, prompt caching, the SDK's own retries. */
export class AnthropicModelClient implements ModelClient {
  private readonly client: Anthropic;

  constructor(private readonly options: AnthropicModelClientOptions) {
    this.client = new Anthropic({
      apiKey: options.apiKey,
      ...(options.baseURL ? { baseURL: options.baseURL } : {}),
      maxRetries: options.maxRetries ?? 2,
      timeout: options.timeoutMs ?? 10 * 60 * 1000,
    });
  }

  async createMessage(request: ModelRequest, signal?: AbortSignal): Promise<ModelResponse> {
    const cache = cacheControl(request.cacheTtl);
    const tools = request.tools.map((tool, index) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.inputSchema as Anthropic.Tool.InputSchema,
      // One breakpoint after the last tool caches the whole tool list.
      ...(index === request.tools.length - 1 ? { cache_control: cache } : {}),
    }));
    const messages = request.messages.map((message, index) => {
      const content = message.content.map((block) => ({ ...block }) as Anthropic.ContentBlockParam);
      // A breakpoint on the newest message lets the next call reuse the whole prefix.
      const last = content.at(-1);
      if (index === request.messages.length - 1 && last && last.type !== "thinking" && last.type !== "redacted_thinking") {
        Object.assign(last, { cache_control: cache });
      }
      return { role: message.role, content };
    });
    try {
      const stream = this.client.messages.stream(
        {
          model: this.options.model,
          max_tokens: request.maxTokens,
          system: [{ type: "text", text: request.system, cache_control: cache }],
          tools,
          messages,
        },
        signal ? { signal } : {},
      );
      const message = await stream.finalMessage();
      const content = message.content.flatMap((block): Array<TextBlock | ToolUseBlock> => {
        if (block.type === "text") return [{ type: "text", text: block.text }];
        if (block.type === "tool_use") return [{ type: "tool_use", id: block.id, name: block.name, input: block.input }];
        return [];
      });
      return {
        content,
        stopReason: message.stop_reason ?? "end_turn",
        usage: {
          inputTokens: message.usage.input_tokens,
          outputTokens: message.usage.output_tokens,
          cacheReadTokens: message.usage.cache_read_input_tokens ?? 0,
          cacheWriteTokens: message.usage.cache_creation_input_tokens ?? 0,
        },
      };
    } catch (error) {
      throw toModelError(error);
    }
  }
}
