import type { AnswerValue } from "./answer.js";

/** The `tool_result` content of an ask, exactly as DESIGN §2 lists it. */
export type AskResult =
  | { ok: true; value: AnswerValue; other?: true }
  | { ok: false; cancelled: true }
  | { ok: false; timeout: true }
  | { ok: false; error: string };

export const BUDGET_EXHAUSTED: AskResult = { ok: false, error: "ask_user budget exhausted: answer with what you have" };
export const SKIPPED_FOR_ASK = "skipped: ask_user took precedence";

export function answeredResult(value: AnswerValue, other?: true): AskResult {
  return other ? { ok: true, value, other } : { ok: true, value };
}

export function resultText(result: AskResult): string {
  return JSON.stringify(result);
}

/** What the loop returns when it suspends (DESIGN §1). */
export interface Interrupt {
  status: "INTERRUPT";
  intent: "HUMAN_INTERVENTION";
  data: { ask_id: string; question: string; candidates: string[]; spec: unknown };
}
