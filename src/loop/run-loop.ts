import type { Interrupt } from "../ask/result.js";
import type { EngineSettings } from "../engine/settings.js";
import { ModelError } from "../ports/errors.js";
import { type ChatMessage, type ModelClient, type ToolResultBlock, type ToolUseBlock, ZERO_USAGE } from "../ports/model-client.js";
import type { Ask, Session, SessionStore } from "../ports/session-store.js";
import { finalText, toRequestMessages } from "./history.js";
import { SYSTEM_PROMPT } from "./system-prompt.js";
import { handleToolCalls } from "./tool-calls.js";
import { ASK_USER_DEFINITION, type Tool } from "./tools.js";

export interface LoopDependencies {
  store: SessionStore;
  model: ModelClient;
  tools: ReadonlyMap<string, Tool>;
  settings: EngineSettings;
  clock: () => number;
  newAskId: () => string;
  progress: (text: string) => void;
}

export type LoopResult =
  | { outcome: "suspended"; ask: Ask; interrupt: Interrupt }
  | { outcome: "completed"; text: string; nextTurn: boolean }
  | { outcome: "max-iterations" | "cancelled"; nextTurn: boolean }
  | { outcome: "failed"; error: string; nextTurn: boolean };

/**
 * The agent loop: call the model, answer its tool calls, repeat; suspend on ask_user.
 * Every iteration is committed in one store transaction before the next begins.
 * `history` is the in-memory transcript; it may hold a secret the store only has masked.
 */
export async function runLoop(deps: LoopDependencies, startingSession: Session, history: ChatMessage[]): Promise<LoopResult> {
  const sessionId = startingSession.id;
  const { store, settings } = deps;
  const toolDefinitions = [...[...deps.tools.values()].map((tool) => tool.definition)];
  if (settings.maxAskPerTurn > 0) toolDefinitions.push(ASK_USER_DEFINITION);

  for (let iteration = 0; ; iteration++) {
    // The caller's fresh read serves the first iteration; later ones read the counters again.
    const session = iteration === 0 ? startingSession : await store.getSession(sessionId);
    if (!session) throw new Error(`session ${sessionId} vanished during its turn`);
    // Stop is cooperative: it takes effect between iterations, never in the middle of a write.
    if (session.stopRequested) return end(deps, sessionId, [], { outcome: "cancelled" });
    if (session.turnIterations >= settings.maxIterations) return end(deps, sessionId, [], { outcome: "max-iterations" });

    deps.progress("Thinking…");
    let response: Awaited<ReturnType<ModelClient["createMessage"]>>;
    try {
      response = await deps.model.createMessage({
        system: SYSTEM_PROMPT,
        tools: toolDefinitions,
        messages: toRequestMessages(history),
        maxTokens: settings.maxTokens,
      });
    } catch (error) {
      const message =
        error instanceof ModelError ? error.message : `internal error: ${error instanceof Error ? error.message : String(error)}`;
      return end(deps, sessionId, [], { outcome: "failed", error: message });
    }
    const assistant: ChatMessage = { role: "assistant", content: response.content };
    const toolUses = response.content.filter((block): block is ToolUseBlock => block.type === "tool_use");
    if (toolUses.length === 0) {
      const text = finalText(assistant);
      const result = await store.commitStep(sessionId, {
        messages: [assistant],
        usage: response.usage,
        end: { outcome: "completed" },
        now: deps.clock(),
      });
      return { outcome: "completed", text, nextTurn: result.nextTurn };
    }

    if (await store.isStopRequested(sessionId)) {
      const results = toolUses.map(
        (use): ToolResultBlock => ({ type: "tool_result", tool_use_id: use.id, content: "skipped: stopped by a person", is_error: true }),
      );
      return end(deps, sessionId, [assistant, { role: "user", content: results }], { outcome: "cancelled" }, response.usage);
    }

    const outcome = await handleToolCalls(toolUses, {
      tools: deps.tools,
      asksUsed: session.turnAsks,
      askBudget: settings.maxAskPerTurn,
      defaultTimeoutSeconds: settings.askTimeoutSeconds,
      onToolStart: (name) => deps.progress(`Running tool ${name}…`),
    });
    if (outcome.kind === "results") {
      const resultMessage: ChatMessage = { role: "user", content: outcome.results };
      await store.commitStep(sessionId, { messages: [assistant, resultMessage], usage: response.usage, now: deps.clock() });
      history.push(assistant, resultMessage);
      continue;
    }

    // Persist, then post: the ask row is committed with the assistant message before any card exists.
    const now = deps.clock();
    const ask: Ask = {
      id: deps.newAskId(),
      sessionId,
      toolUseId: outcome.toolUse.id,
      spec: outcome.spec,
      status: "pending",
      siblingResults: outcome.siblingResults,
      cardRef: null,
      deadline: now + outcome.spec.timeoutSeconds * 1000,
      answer: null,
      answeredBy: null,
      createdAt: now,
      endedAt: null,
    };
    await store.commitStep(sessionId, { messages: [assistant], usage: response.usage, ask, now });
    history.push(assistant);
    const askId = ask.id;
    return {
      outcome: "suspended",
      ask,
      interrupt: {
        status: "INTERRUPT",
        intent: "HUMAN_INTERVENTION",
        data: {
          ask_id: askId,
          question: outcome.spec.question,
          candidates: outcome.spec.options.map((option) => option.label),
          spec: outcome.spec,
        },
      },
    };
  }
}

async function end(
  deps: LoopDependencies,
  sessionId: string,
  messages: ChatMessage[],
  ending: { outcome: "cancelled" | "max-iterations" } | { outcome: "failed"; error: string },
  usage = ZERO_USAGE,
): Promise<LoopResult> {
  const result = await deps.store.commitStep(sessionId, { messages, usage, end: ending, now: deps.clock() });
  return { ...ending, nextTurn: result.nextTurn };
}
