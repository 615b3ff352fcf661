import { BUDGET_EXHAUSTED, resultText, SKIPPED_FOR_ASK } from "../ask/result.js";
import { type AskSpec, parseAskSpec } from "../ask/spec.js";
import type { ToolResultBlock, ToolUseBlock } from "../ports/model-client.js";
import { ASK_USER_TOOL_NAME, type Tool } from "./tools.js";

export type ToolCallOutcome =
  | { kind: "results"; results: ToolResultBlock[] }
  | { kind: "suspend"; toolUse: ToolUseBlock; spec: AskSpec; siblingResults: ToolResultBlock[] };

export interface ToolCallContext {
  tools: ReadonlyMap<string, Tool>;
  asksUsed: number;
  askBudget: number;
  defaultTimeoutSeconds: number;
  onToolStart?: (name: string) => void;
}

/**
 * Answers every tool_use of one assistant message. An ask_user call takes precedence: every other call
 * (a second ask_user included) gets a paired is_error result so the model can retry it with the answer in hand.
 */
export async function handleToolCalls(toolUses: ToolUseBlock[], context: ToolCallContext): Promise<ToolCallOutcome> {
  const ask = toolUses.find((use) => use.name === ASK_USER_TOOL_NAME);
  if (!ask) return { kind: "results", results: await runTools(toolUses, context) };

  const siblingResults = toolUses.filter((use) => use !== ask).map((use) => errorResult(use.id, SKIPPED_FOR_ASK));
  if (context.asksUsed >= context.askBudget) {
    return {
      kind: "results",
      results: [{ type: "tool_result", tool_use_id: ask.id, content: resultText(BUDGET_EXHAUSTED) }, ...siblingResults],
    };
  }
  const parsed = parseAskSpec(ask.input, context.defaultTimeoutSeconds);
  if (!parsed.ok) return { kind: "results", results: [errorResult(ask.id, parsed.error), ...siblingResults] };
  return { kind: "suspend", toolUse: ask, spec: parsed.spec, siblingResults };
}

async function runTools(toolUses: ToolUseBlock[], context: ToolCallContext): Promise<ToolResultBlock[]> {
  const results: ToolResultBlock[] = [];
  for (const use of toolUses) {
    const tool = context.tools.get(use.name);
    if (!tool) {
      results.push(
        errorResult(use.id, `unknown tool "${use.name}"; available: ${[...context.tools.keys(), ASK_USER_TOOL_NAME].join(", ")}`),
      );
      continue;
    }
    context.onToolStart?.(use.name);
    try {
      results.push({ type: "tool_result", tool_use_id: use.id, content: await tool.run(use.input) });
    } catch (error) {
      // A failing tool is the model's problem to work around, never a crash of the turn.
      results.push(errorResult(use.id, `tool "${use.name}" failed: ${error instanceof Error ? error.message : String(error)}`));
    }
  }
  return results;
}

function errorResult(toolUseId: string, content: string): ToolResultBlock {
  return { type: "tool_result", tool_use_id: toolUseId, content, is_error: true };
}
