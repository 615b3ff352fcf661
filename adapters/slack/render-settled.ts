import type { types } from "@slack/bolt";
import type { AskType } from "../../src/ask/spec.js";
import type { CardView, Settlement } from "../../src/ports/platform-adapter.js";
import { notificationText, questionBlocks, type SlackMessage, titleBlocks } from "./render-card.js";
import { SLACK_LIMITS } from "./slack-limits.js";
import { escapeMrkdwn, escapeUntrusted, mrkdwnText } from "./slack-text.js";

/** The settled card keeps at most this much of the question, so the thread still reads well. */
const SETTLED_QUESTION_CHARS = 2900;

/**
 * One line saying how the ask ended and who ended it. The answer text arrives already masked.
 * An approval's line is the decision itself ("Approved", "Denied: “…”"), so it reads "… — by <@U>".
 */
export function settlementLine(settlement: Settlement, type?: AskType): string {
  const who = settlement.by ? `<@${escapeMrkdwn(settlement.by)}>` : undefined;
  const by = who ? (settlement.byAdmin ? `by an admin, ${who}` : `by ${who}`) : undefined;
  switch (settlement.status) {
    case "answered": {
      // A person typed the answer: `<@U…>` in it shows as typed, only the answerer below is a real mention.
      const answer = escapeUntrusted(settlement.answerText ?? "answered");
      if (type === "approval") {
        const mark = answer.startsWith("Denied") ? "🚫" : "✅";
        return by ? `${mark} ${answer} — ${by}` : `${mark} ${answer}`;
      }
      return by ? `✅ ${answer} — answered ${by}` : `✅ ${answer}`;
    }
    case "cancelled":
      if (settlement.stopped) return by ? `⏹ Stopped ${by}` : "⏹ Stopped";
      return by ? `✖️ Cancelled ${by}` : "✖️ Cancelled";
    case "expired":
      return type === "approval" ? "⌛ Expired: nobody approved it in time, so it did not run" : "⌛ Expired: nobody answered in time";
  }
}

/** The card after its ask ended: the question stays, the controls become one outcome line. */
export function renderSettledCard(card: CardView, settlement: Settlement): SlackMessage {
  const line = settlementLine(settlement, card.spec.type);
  return {
    text: `${notificationText(card.spec)} ${line}`.slice(0, SLACK_LIMITS.messageTextChars),
    blocks: [
      ...titleBlocks(card.spec),
      ...questionBlocks(card.spec.question, SETTLED_QUESTION_CHARS),
      { type: "context", elements: [mrkdwnText(line)] } satisfies types.ContextBlock,
    ],
  };
}
