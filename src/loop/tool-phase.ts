import { approvalSpec, readDecision } from "../ask/approval.js";
import { argumentsHash } from "../ask/canonical-json.js";
import type { AskSpec } from "../ask/spec.js";
import type { ChatMessage, ToolResultBlock, ToolUseBlock } from "../ports/model-client.js";
import type { Ask, Session, SessionStore } from "../ports/session-store.js";
import type { ElicitationRequest, ElicitationResponse } from "../ports/tool-provider.js";
import type { CatalogTool, ToolCatalog } from "../tools/tool-catalog.js";

export interface ToolPhaseDependencies {
  store: SessionStore;
  catalog: ToolCatalog;
  clock: () => number;
  approvalTimeoutSeconds: number;
  /** Aborted by Stop: a running call is cancelled on its server, calls not yet sent are not sent. */
  signal: AbortSignal;
  progress: (text: string) => void;
  /** Puts a server's elicitation before the people of the session as a form; absent, the server hears `decline`. */
  elicit?: ((server: string, request: ElicitationRequest) => Promise<ElicitationResponse>) | undefined;
}

/** One call that needs a person's OK before anything runs: the loop suspends on its approval card. */
export interface ApprovalNeeded {
  kind: "approve";
  toolUse: ToolUseBlock;
  spec: AskSpec;
  /** Every call of the message answered `cancelled`, kept with the ask for a Stop that ends the turn there. */
  siblingResults: ToolResultBlock[];
}

export type ToolPhaseOutcome = { kind: "results"; message: ChatMessage } | ApprovalNeeded;

type Verdict = { run: true; tool: CatalogTool; approvedHash?: string } | { run: false; content: string };

/**
 * Answers every tool call of one assistant message (no ask_user among them): each call that needs approval is
 * decided on its own, one card at a time in the model's order; once all are decided the calls run in that order,
 * each journaled before it is sent and after it returns, and every result goes back in one message (DESIGN §11).
 */
export async function runToolPhase(session: Session, toolUses: ToolUseBlock[], deps: ToolPhaseDependencies): Promise<ToolPhaseOutcome> {
  const verdicts: Verdict[] = [];
  for (const use of toolUses) {
    const verdict = await decide(session, use, deps);
    if ("kind" in verdict) return { ...verdict, siblingResults: cancelledResults(toolUses, use) };
    verdicts.push(verdict);
  }
  const results: ToolResultBlock[] = [];
  for (const [index, use] of toolUses.entries()) {
    const verdict = verdicts[index]!;
    results.push(verdict.run ? await execute(session, use, verdict, deps) : errorResult(use.id, verdict.content));
  }
  return { kind: "results", message: { role: "user", content: results } };
}

async function decide(
  session: Session,
  use: ToolUseBlock,
  deps: ToolPhaseDependencies,
): Promise<Verdict | Omit<ApprovalNeeded, "siblingResults">> {
  const tool = deps.catalog.find(use.name);
  if (!tool) {
    const known = deps.catalog.offered().map((definition) => definition.name);
    return { run: false, content: `unknown tool "${use.name}"; available: ${[...known, "ask_user"].join(", ")}` };
  }
  if (tool.policy.policy === "deny") return { run: false, content: `denied by policy: ${use.name} may not be used here` };
  if (tool.policy.policy === "auto") return { run: true, tool };
  const ask = await deps.store.askForToolUse(session.id, use.id);
  if (!ask) {
    const spec = approvalSpec({
      tool: use.name,
      description: tool.definition.description,
      input: use.input,
      timeoutSeconds: deps.approvalTimeoutSeconds,
    });
    return { kind: "approve", toolUse: use, spec };
  }
  return verdictOf(session, use, tool, ask);
}

function verdictOf(session: Session, use: ToolUseBlock, tool: CatalogTool, ask: Ask): Verdict {
  if (ask.status === "expired") return { run: false, content: "approval timed out" };
  if (ask.status !== "answered") return { run: false, content: "cancelled" };
  const decision = readDecision(ask.answer?.value);
  const who = `${session.conversation.platform}:${ask.answeredBy ?? "unknown"}`;
  if (decision?.decision !== "approve") return { run: false, content: `denied by ${who}: ${decision?.reason ?? "no reason given"}` };
  // The approval is bound to the exact call: the same tool and the same arguments, this tool_use and no other.
  if (ask.spec.approval?.tool !== use.name || ask.spec.approval.argumentsHash !== argumentsHash(use.input)) {
    return { run: false, content: "refused: the approval does not match this call (tool or arguments changed); nothing was run" };
  }
  return { run: true, tool, approvedHash: ask.spec.approval.argumentsHash };
}

/** At most once: committed as started before it leaves; a started call a crash interrupted is never sent again. */
async function execute(
  session: Session,
  use: ToolUseBlock,
  verdict: Extract<Verdict, { run: true }>,
  deps: ToolPhaseDependencies,
): Promise<ToolResultBlock> {
  const record = await deps.store.getToolCall(session.id, use.id);
  if (record?.status === "finished" && record.result) return record.result;
  if (deps.signal.aborted) return errorResult(use.id, "cancelled: stopped by a person before it ran");
  // Hash exactly what is about to be sent (arguments are always an object); an approval for anything else is refused.
  const sent =
    typeof use.input === "object" && use.input !== null && !Array.isArray(use.input) ? (use.input as Record<string, unknown>) : {};
  const hash = argumentsHash(sent);
  if (verdict.approvedHash !== undefined && verdict.approvedHash !== hash) {
    return errorResult(use.id, "refused: the approval does not match this call (tool or arguments changed); nothing was run");
  }
  if (record?.status === "started" && verdict.tool.hints.idempotent !== true) {
    return errorResult(use.id, interruptedText(use.name));
  }
  if (!record) {
    const started = await deps.store.startToolCall({
      sessionId: session.id,
      toolUseId: use.id,
      name: use.name,
      argumentsHash: hash,
      now: deps.clock(),
    });
    // Another runner got here first: whatever it does, this one must not send the call again.
    if (!started) return errorResult(use.id, `interrupted: ${use.name} was already started elsewhere; it may or may not have taken effect`);
  }
  deps.progress(`Running tool ${use.name}…`);
  const elicit = deps.elicit;
  const output = await deps.catalog.run(use.name, sent, {
    signal: deps.signal,
    onProgress: (text) => deps.progress(`${use.name}: ${text}`),
    onElicitation: elicit ? (request: ElicitationRequest) => elicit(verdict.tool.origin, request) : undefined,
  });
  const result: ToolResultBlock = {
    type: "tool_result",
    tool_use_id: use.id,
    content: output.content,
    ...(output.isError ? { is_error: true } : {}),
  };
  await deps.store.finishToolCall(session.id, use.id, result, deps.clock());
  return result;
}

function cancelledResults(toolUses: ToolUseBlock[], except: ToolUseBlock): ToolResultBlock[] {
  return toolUses.filter((use) => use !== except).map((use) => errorResult(use.id, "cancelled"));
}

function errorResult(toolUseId: string, content: string): ToolResultBlock {
  return { type: "tool_result", tool_use_id: toolUseId, content, is_error: true };
}

function interruptedText(tool: string): string {
  return `interrupted: Parley restarted while ${tool} was running; it may or may not have taken effect`;
}

function givenUpText(tool: string): string {
  return `interrupted: Parley restarted while ${tool} was running, then gave the turn up; it may or may not have taken effect`;
}

/**
 * The results that close a turn given up with tool calls still open (recovery's last resort): without them the
 * person's next message would reach the model with a tool_use and no tool_result, which it refuses. A call the
 * journal saw finish keeps its result; one it saw start may have run; one it never saw did not.
 */
export async function givenUpResults(
  store: Pick<SessionStore, "getToolCall">,
  sessionId: string,
  history: readonly ChatMessage[],
): Promise<ToolResultBlock[]> {
  const results: ToolResultBlock[] = [];
  for (const use of pendingToolUses(history)) {
    const record = await store.getToolCall(sessionId, use.id);
    if (record?.status === "finished" && record.result) results.push(record.result);
    // Even an idempotent call is not run again: the turn is over.
    else if (record) results.push(errorResult(use.id, givenUpText(use.name)));
    else results.push(errorResult(use.id, "cancelled: the turn was given up before this call ran"));
  }
  return results;
}

/** The tool calls of a history's last message when they still wait for their results (a suspend or a crash came between). */
export function pendingToolUses(history: readonly ChatMessage[]): ToolUseBlock[] {
  const last = history.at(-1);
  if (last?.role !== "assistant") return [];
  return last.content.filter((block): block is ToolUseBlock => block.type === "tool_use");
}
