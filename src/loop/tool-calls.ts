import { BUDGET_EXHAUSTED, resultText, SKIPPED_FOR_ASK } from "../ask/result.js";
import { type AskSpec, parseAskSpec } from "../ask/spec.js";
import type { ToolResultBlock, ToolUseBlock } from "../ports/model-client.js";
import { ASK_USER_TOOL_NAME } from "./tools.js";

export type ToolCallOutcome =
  | { kind: "results"; results: ToolResultBlock[] }
  | { kind: "tools" }
  | { kind: "suspend"; toolUse: ToolUseBlock; spec: AskSpec; siblingResults: ToolResultBlock[] };

export interface ToolCallContext {
  asksUsed: number;
  askBudget: number;
  defaultTimeoutSeconds: number;
}

/**
 * Reads the tool_uses of one assistant message. An ask_user call takes precedence: every other call (a second
 * ask_user included) gets a paired is_error result so the model can retry it with the answer in hand. Without
 * one, the calls are the tool phase's (`tools`): approvals, then the calls themselves (tool-phase.ts).
 */
export function handleToolCalls(toolUses: ToolUseBlock[], context: ToolCallContext): ToolCallOutcome {
  const ask = toolUses.find((use) => use.name === ASK_USER_TOOL_NAME);
  if (!ask) return { kind: "tools" };

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

function errorResult(toolUseId: string, content: string): ToolResultBlock {
  return { type: "tool_result", tool_use_id: toolUseId, content, is_error: true };
}
