import type { ChatMessage, ModelClient, ModelRequest, ModelResponse } from "../src/ports/model-client.js";

/** The benchmark's shape: N sessions, K asks each, H prior messages of about 500 characters. */
export interface Workload {
  sessions: number;
  asksPerSession: number;
  history: number;
}

export const PRIOR_MESSAGE_CHARS = 500;
const FILLER = "The quarterly report covers revenue, churn, hiring and the roadmap for the platform team. ".repeat(8);

/** H alternating user/assistant messages of about 500 characters, ending on an assistant message. */
export function priorHistory(count: number): ChatMessage[] {
  return Array.from({ length: count }, (_, index): ChatMessage => {
    const role = index % 2 === 0 ? "user" : "assistant";
    return { role, content: [{ type: "text", text: `${index}: ${FILLER}`.slice(0, PRIOR_MESSAGE_CHARS) }] };
  });
}

export const ASK_INPUT = { type: "select", question: "Which environment should I deploy to?", options: ["staging", "production", "qa"] };

/**
 * A zero-latency model: it asks until the turn holds K answers, then ends the turn.
 * It counts the answers in the request, so it needs no state of its own.
 */
export class ScriptedModel implements ModelClient {
  calls = 0;

  constructor(private readonly asksPerTurn: number) {}

  async createMessage(request: ModelRequest): Promise<ModelResponse> {
    this.calls++;
    let answers = 0;
    for (const message of request.messages) for (const block of message.content) if (block.type === "tool_result") answers++;
    const usage = { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 };
    if (answers >= this.asksPerTurn) return { content: [{ type: "text", text: "Deployed." }], stopReason: "end_turn", usage };
    return {
      content: [{ type: "tool_use", id: `toolu_${this.calls}`, name: "ask_user", input: ASK_INPUT }],
      stopReason: "tool_use",
      usage,
    };
  }
}

export interface ThroughputResult {
  system: string;
  history: number;
  sessions: number;
  resumes: number;
  seconds: number;
  resumesPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  bytesPerSession: number;
  peakRssMiB: number;
}

export function percentile(sorted: number[], fraction: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]!;
}

export function summarise(
  system: string,
  workload: Workload,
  latenciesMs: number[],
  seconds: number,
  databaseBytes: number,
): ThroughputResult {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  return {
    system,
    history: workload.history,
    sessions: workload.sessions,
    resumes: latenciesMs.length,
    seconds,
    resumesPerSecond: latenciesMs.length / seconds,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    bytesPerSession: databaseBytes / workload.sessions,
    peakRssMiB: process.resourceUsage().maxRSS / 1024,
  };
}
