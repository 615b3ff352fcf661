import type { Interrupt } from "../ask/result.js";
import type { AskSpec } from "../ask/spec.js";
import type { EngineSettings } from "../engine/settings.js";
import {
  type ChatMessage,
  type ModelClient,
  type ModelRequest,
  type TokenUsage,
  type ToolResultBlock,
  type ToolUseBlock,
  ZERO_USAGE,
} from "../ports/model-client.js";
import { turnKeyOf } from "../ports/platform-adapter.js";
import { type Ask, type NewAsk, type PostClaim, pendingAskOf, type Session, type SessionStore } from "../ports/session-store.js";
import type { ToolCatalog } from "../tools/tool-catalog.js";
import { chooseCacheTtl, estimatePromptTokens, type PromptCacheMemory } from "./cache-ttl.js";
import { callModel, type ModelRetryPolicy, TurnInterrupted } from "./call-model.js";
import { finalText, toRequestMessages } from "./history.js";
import { handleToolCalls } from "./tool-calls.js";
import { pendingToolUses, runToolPhase, type ToolPhaseDependencies } from "./tool-phase.js";
import { ASK_USER_DEFINITION, ASK_USER_TOOL_NAME } from "./tools.js";

export interface LoopDependencies {
  store: SessionStore;
  model: ModelClient;
  catalog: ToolCatalog;
  settings: EngineSettings;
  /** Parley's system prompt with the team's own instructions appended. */
  systemPrompt: string;
  clock: () => number;
  /** How long, and how, a busy model is waited out before the turn fails. */
  retry: ModelRetryPolicy;
  newAskId: () => string;
  /** The claim to post what a step writes (its card, the final answer), stored with it; absent, nothing is claimed. */
  postClaim?: (now: number) => PostClaim;
  /** The status line; `immediate` skips the throttle (the model-busy notice must show before the wait). */
  progress: (text: string, options?: { immediate?: boolean }) => void;
  /** Aborted by Stop: a running tool call is cancelled on its server. */
  signal: AbortSignal;
  /** Aborted when the process shuts down: a wait for a busy model ends by throwing TurnInterrupted. */
  shutdown?: AbortSignal;
  /** A server's elicitation during a call, as a form card in the session. */
  elicit?: ToolPhaseDependencies["elicit"];
  /** What this process has seen of each session's prompt cache, across turns: it decides each request's ttl. */
  promptCache: PromptCacheMemory;
}

export type LoopResult =
  | { outcome: "suspended"; ask: Ask; interrupt: Interrupt }
  | { outcome: "completed"; text: string; replyKey: string; nextTurn: boolean }
  | { outcome: "max-iterations" | "cancelled"; nextTurn: boolean }
  | { outcome: "failed"; error: string; nextTurn: boolean; cause?: unknown };

/**
 * The agent loop: call the model, answer its tool calls, repeat; suspend on ask_user.
 * Every iteration is committed in one store transaction before the next begins.
 * `history` is the in-memory transcript; it may hold a secret the store only has masked.
 */
export async function runLoop(deps: LoopDependencies, startingSession: Session, history: ChatMessage[]): Promise<LoopResult> {
  const sessionId = startingSession.id;
  const { store, settings } = deps;
  for (let iteration = 0; ; iteration++) {
    // The caller's fresh read serves the first iteration; later ones read the counters again.
    const session = iteration === 0 ? startingSession : await store.getSession(sessionId);
    if (!session) throw new Error(`session ${sessionId} vanished during its turn`);
    // Tool calls still waiting for their results (a suspend on an approval, or a crash, came between) come first:
    // the history must never reach the model with a tool_use and no tool_result.
    const pending = pendingToolUses(history).filter((use) => use.name !== ASK_USER_TOOL_NAME);
    if (pending.length > 0) {
      if (session.stopRequested) {
        const skipped = pending.map((use) => stoppedResult(use.id));
        return end(deps, sessionId, [{ role: "user", content: skipped }], { outcome: "cancelled" });
      }
      const phase = await runToolPhase(session, pending, {
        store,
        catalog: deps.catalog,
        clock: deps.clock,
        approvalTimeoutSeconds: settings.askTimeoutSeconds,
        signal: deps.signal,
        progress: deps.progress,
        elicit: deps.elicit,
      });
      if (phase.kind === "approve") return suspend(deps, sessionId, [], ZERO_USAGE, phase);
      await store.commitStep(sessionId, { messages: [phase.message], usage: ZERO_USAGE, now: deps.clock() });
      history.push(phase.message);
      continue;
    }
    // Stop is cooperative: it takes effect between iterations, never in the middle of a write.
    if (session.stopRequested) return end(deps, sessionId, [], { outcome: "cancelled" });
    if (session.turnIterations >= settings.maxIterations) return end(deps, sessionId, [], { outcome: "max-iterations" });

    deps.progress("Thinking…");
    // Read each iteration: a server's tool list may change (list_changed), and so may an admin's policy.
    const offered = deps.catalog.list().filter((tool) => tool.policy.policy !== "deny");
    const toolDefinitions = offered.map((tool) => tool.definition);
    if (settings.maxAskPerTurn > 0) toolDefinitions.push(ASK_USER_DEFINITION);
    const prompt: ModelRequest = {
      system: deps.systemPrompt,
      tools: toolDefinitions,
      messages: toRequestMessages(history),
      maxTokens: settings.maxTokens,
    };
    // What this request writes to the prompt cache must outlive the wait it may end in (cache-ttl.ts).
    const sentAt = deps.clock();
    const promptTokens = estimatePromptTokens(prompt);
    const cacheTtl = chooseCacheTtl({
      canAsk: session.turnAsks < settings.maxAskPerTurn,
      canNeedApproval: offered.some((tool) => tool.policy.policy === "ask"),
      askTimeoutSeconds: settings.askTimeoutSeconds,
      promptTokens,
      cachedTokens: deps.promptCache.cachedTokens(sessionId, sentAt),
    });
    const call = await callModel(
      {
        model: deps.model,
        retry: deps.retry,
        clock: deps.clock,
        signal: deps.signal,
        shutdown: deps.shutdown,
        isStopRequested: () => store.isStopRequested(sessionId),
        progress: deps.progress,
      },
      { ...prompt, cacheTtl },
    );
    if (!call.ok && call.outcome === "cancelled") return end(deps, sessionId, [], { outcome: "cancelled" });
    if (!call.ok && call.outcome === "shutdown") throw new TurnInterrupted();
    if (!call.ok) {
      const ended = await end(deps, sessionId, [], { outcome: "failed", error: call.error });
      return { outcome: "failed", error: call.error, nextTurn: ended.nextTurn, cause: call.cause };
    }
    deps.promptCache.answered(sessionId, sentAt, cacheTtl, promptTokens);
    const { response } = call;
    const assistant: ChatMessage = { role: "assistant", content: response.content };
    const toolUses = response.content.filter((block): block is ToolUseBlock => block.type === "tool_use");
    if (toolUses.length === 0) {
      // A Stop taken while the model was answering (in another process, seen here only now): the answer stays in
      // the history but is not posted, as the person asked.
      if (await store.isStopRequested(sessionId)) return end(deps, sessionId, [assistant], { outcome: "cancelled" }, response.usage);
      const text = finalText(assistant);
      const replyKey = turnKeyOf(startingSession);
      // The answer goes into the outbox with the turn's end: posted after, it survives a crash in between.
      const now = deps.clock();
      const claim = deps.postClaim ? { claim: deps.postClaim(now) } : {};
      const reply = text ? { reply: { key: replyKey, sessionId, text, ...claim } } : {};
      const result = await store.commitStep(sessionId, {
        messages: [assistant],
        usage: response.usage,
        end: { outcome: "completed", ...reply },
        now,
      });
      return { outcome: "completed", text, replyKey, nextTurn: result.nextTurn };
    }

    if (await store.isStopRequested(sessionId)) {
      const results = toolUses.map((use) => stoppedResult(use.id));
      return end(deps, sessionId, [assistant, { role: "user", content: results }], { outcome: "cancelled" }, response.usage);
    }

    const outcome = handleToolCalls(toolUses, {
      asksUsed: session.turnAsks,
      askBudget: settings.maxAskPerTurn,
      defaultTimeoutSeconds: settings.askTimeoutSeconds,
    });
    if (outcome.kind === "results") {
      const resultMessage: ChatMessage = { role: "user", content: outcome.results };
      await store.commitStep(sessionId, { messages: [assistant, resultMessage], usage: response.usage, now: deps.clock() });
      history.push(assistant, resultMessage);
      continue;
    }
    if (outcome.kind === "tools") {
      // At most once: the calls are on record, with the message that made them, before any of them is sent.
      await store.commitStep(sessionId, { messages: [assistant], usage: response.usage, now: deps.clock() });
      history.push(assistant);
      continue;
    }
    // Persist, then post: the ask row is committed with the assistant message before any card exists.
    history.push(assistant);
    return suspend(deps, sessionId, [assistant], response.usage, outcome);
  }
}

/** Commits the ask (with the step's messages) and returns the INTERRUPT; the card is posted after, by the caller. */
async function suspend(
  deps: LoopDependencies,
  sessionId: string,
  messages: ChatMessage[],
  usage: TokenUsage,
  pending: { toolUse: ToolUseBlock; spec: AskSpec; siblingResults: ToolResultBlock[] },
): Promise<LoopResult> {
  const now = deps.clock();
  const newAsk: NewAsk = {
    id: deps.newAskId(),
    toolUseId: pending.toolUse.id,
    spec: pending.spec,
    siblingResults: pending.siblingResults,
    deadline: now + pending.spec.timeoutSeconds * 1000,
    ...(deps.postClaim ? { claim: deps.postClaim(now) } : {}),
  };
  await deps.store.commitStep(sessionId, { messages, usage, ask: newAsk, now });
  const ask = pendingAskOf(newAsk, sessionId, now);
  return {
    outcome: "suspended",
    ask,
    interrupt: {
      status: "INTERRUPT",
      intent: "HUMAN_INTERVENTION",
      data: {
        ask_id: ask.id,
        question: pending.spec.question,
        candidates: pending.spec.options.map((option) => option.label),
        spec: pending.spec,
      },
    },
  };
}

function stoppedResult(toolUseId: string): ToolResultBlock {
  return { type: "tool_result", tool_use_id: toolUseId, content: "skipped: stopped by a person", is_error: true };
}

async function end(
  deps: LoopDependencies,
  sessionId: string,
  messages: ChatMessage[],
  ending: { outcome: "cancelled" | "max-iterations" } | { outcome: "failed"; error: string },
  usage = ZERO_USAGE,
): Promise<Extract<LoopResult, { outcome: "cancelled" | "max-iterations" | "failed" }>> {
  const result = await deps.store.commitStep(sessionId, { messages, usage, end: ending, now: deps.clock() });
  return { ...ending, nextTurn: result.nextTurn };
}
