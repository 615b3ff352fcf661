import type { SessionStatus, StartOrQueue, TurnOutcome } from "../ports/session-store.js";

/** What happens to a session on each event. Every store follows this table; the contract suite checks each row. */
export type SessionEvent = "message" | "suspend" | "resolve" | "stop" | "end" | "end-with-queued" | "fail" | "api-ask" | "api-resolve";

export interface Transition {
  from: SessionStatus;
  event: SessionEvent;
  to: SessionStatus;
  /** What else the same transaction does, in words, for the next store's author. */
  effect: string;
}

export const SESSION_TRANSITIONS: readonly Transition[] = [
  { from: "idle", event: "message", to: "running", effect: "append the message; a new turn: turn counters and Stop reset" },
  { from: "failed", event: "message", to: "running", effect: "as from idle; last_error cleared" },
  { from: "running", event: "message", to: "running", effect: "queue the message (it starts the next turn)" },
  { from: "waiting", event: "message", to: "waiting", effect: "write nothing; the caller reads the message as an answer" },
  { from: "running", event: "suspend", to: "waiting", effect: "append the step's messages and the ask row; turn_asks + 1" },
  { from: "waiting", event: "resolve", to: "running", effect: "claim the ask from pending; append the result message; audit" },
  { from: "waiting", event: "stop", to: "idle", effect: "claim the ask from pending as cancelled; append the result; outcome cancelled" },
  { from: "running", event: "end", to: "idle", effect: "append the step's messages; record the outcome" },
  { from: "running", event: "end-with-queued", to: "running", effect: "end, then append every queued message and begin the next turn" },
  { from: "running", event: "fail", to: "failed", effect: "record the outcome and the error" },
  { from: "idle", event: "api-ask", to: "waiting", effect: "write the API's ask and its record; history and turn counters untouched" },
  { from: "failed", event: "api-ask", to: "waiting", effect: "as from idle" },
  { from: "running", event: "api-ask", to: "running", effect: "refused as busy: nothing written" },
  { from: "waiting", event: "api-ask", to: "waiting", effect: "refused as busy: nothing written" },
  { from: "waiting", event: "api-resolve", to: "idle", effect: "claim the ask from pending; append nothing; audit" },
];

/** A message for a session in `status`: begin a turn, queue it, or leave it to be read as an answer. */
export function messageTransition(status: SessionStatus): Exclude<StartOrQueue, "duplicate"> {
  if (status === "waiting") return "waiting";
  return status === "running" ? "queued" : "started";
}

/** The status a turn's end leaves, and whether queued messages begin the next turn at once. */
export function endTransition(
  outcome: Exclude<TurnOutcome, "suspended">,
  queuedCount: number,
): { status: SessionStatus; nextTurn: boolean } {
  if (queuedCount > 0) return { status: "running", nextTurn: true };
  return { status: outcome === "failed" ? "failed" : "idle", nextTurn: false };
}
