import type { AnswerOutcome, StopOutcome } from "./conversation.js";
import { type RichText, rich } from "./rich-text.js";

/** The one wording of "your answer did not go through", for every platform; undefined when it did. */
export function answerNotice(outcome: AnswerOutcome): RichText | undefined {
  switch (outcome.kind) {
    case "accepted":
      return undefined;
    case "invalid":
      return [outcome.message];
    case "not-allowed":
      return outcome.notice;
    case "already-ended":
      if (outcome.status === "cancelled") return ["This question was already cancelled."];
      if (outcome.status === "expired") return ["This question already expired."];
      return ["This question was already answered."];
    case "unknown-ask":
      return ["This question is no longer open."];
  }
}

/** What a person hears after a Stop that did nothing; undefined when it worked. */
export function stopNotice(outcome: StopOutcome): RichText | undefined {
  if (outcome === "not-allowed") return rich`Only the person who started this conversation, or an admin, can stop it.`;
  if (outcome === "not-running") return rich`Nothing is running here.`;
  return undefined;
}
