import type { Tool } from "../loop/tools.js";
import type { ImageBlock, TextBlock, ToolDefinition } from "../ports/model-client.js";
import type { ElicitationRequest, ElicitationResponse, ServerStatus, ToolHints, ToolProvider } from "../ports/tool-provider.js";
import { decidePolicy, type PolicyDecision, type PolicyRule } from "./tool-policy.js";

/** A tool as the loop and the admin commands see it: where it comes from, and what a person must do first. */
export interface CatalogTool {
  definition: ToolDefinition;
  hints: ToolHints;
  policy: PolicyDecision;
  /** The MCP server's name, or "built-in". */
  origin: string;
}

export interface ToolRunOptions {
  signal: AbortSignal;
  onProgress?: ((text: string) => void) | undefined;
  onElicitation?: ((request: ElicitationRequest) => Promise<ElicitationResponse>) | undefined;
}

export interface ToolRunResult {
  content: string | Array<TextBlock | ImageBlock>;
  isError: boolean;
}

export interface ToolCatalogDependencies {
  builtIns: readonly Tool[];
  provider?: ToolProvider | undefined;
  /** Policy rules in force now: an admin's first, then TOOL_POLICY's. */
  rules: () => readonly PolicyRule[];
}

/** Parley's own tools and the MCP servers' tools, each with its policy; `deny` tools are never offered. */
export class ToolCatalog {
  constructor(private readonly deps: ToolCatalogDependencies) {}

  /** Every tool known now, with its policy (for `/parley tools`). */
  list(): CatalogTool[] {
    const rules = this.deps.rules();
    const builtIns = this.deps.builtIns.map((tool) => {
      const hints = tool.hints ?? {};
      return { definition: tool.definition, hints, policy: decidePolicy(tool.definition.name, hints, rules), origin: "built-in" };
    });
    const provided = (this.deps.provider?.list() ?? []).map((tool) => ({
      definition: { name: tool.name, description: tool.description, inputSchema: tool.inputSchema },
      hints: tool.hints,
      policy: decidePolicy(tool.name, tool.hints, rules),
      origin: tool.server,
    }));
    return [...builtIns, ...provided];
  }

  /** The tools offered to the model: all but the denied ones. */
  offered(): ToolDefinition[] {
    return this.list()
      .filter((tool) => tool.policy.policy !== "deny")
      .map((tool) => tool.definition);
  }

  find(name: string): CatalogTool | undefined {
    return this.list().find((tool) => tool.definition.name === name);
  }

  /** Each MCP server and its state. */
  servers(): ServerStatus[] {
    return this.deps.provider?.status() ?? [];
  }

  /** Runs a tool; its failures come back as `isError`, never as a throw. */
  async run(name: string, input: Record<string, unknown>, options: ToolRunOptions): Promise<ToolRunResult> {
    const builtIn = this.deps.builtIns.find((tool) => tool.definition.name === name);
    if (builtIn) {
      try {
        return { content: await builtIn.run(input), isError: false };
      } catch (error) {
        return { content: `tool "${name}" failed: ${error instanceof Error ? error.message : String(error)}`, isError: true };
      }
    }
    if (!this.deps.provider) return { content: `unknown tool "${name}"`, isError: true };
    const output = await this.deps.provider.call({
      name,
      input,
      signal: options.signal,
      onProgress: options.onProgress,
      onElicitation: options.onElicitation,
    });
    return { content: output.content, isError: output.isError };
  }
}
