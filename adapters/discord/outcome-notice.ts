import type { AnswerOutcome, StopOutcome } from "../../src/engine/engine.js";

/** The private line a person sees after an answer that did not go through; `undefined` when it did. */
export function outcomeNotice(outcome: AnswerOutcome): string | undefined {
  switch (outcome.kind) {
    case "accepted":
      return undefined;
    case "not-allowed":
      return outcome.message;
    case "invalid":
      return `⚠️ ${outcome.message}`;
    case "already-ended":
      return outcome.status === "answered"
        ? "This question was already answered."
        : outcome.status === "expired"
          ? "This question has expired."
          : "This question was cancelled.";
    case "unknown-ask":
      return "This question is no longer open.";
  }
}

export function stopNotice(outcome: StopOutcome): string | undefined {
  if (outcome === "not-allowed") return "Only the person who started this conversation, or an admin, can stop it.";
  if (outcome === "not-running") return "Nothing is running here.";
  return undefined;
}
