import type { AskType } from "../../src/ask/spec.js";
import type { CardView, Settlement } from "../../src/ports/platform-adapter.js";
import { cardHeader, composeContent, type DiscordMessageBody } from "./render-card.js";

/**
 * The one line that replaces a card's controls once its ask has ended; the answer text is already masked.
 * An approval's answer is the decision itself ("Approved", "Denied: “…”"), so it reads "… — by <@U>".
 */
export function settlementLine(settlement: Settlement, type?: AskType): string {
  const by = settlement.by ? `<@${settlement.by}>` : "someone";
  const who = settlement.byAdmin ? `an admin, ${by}` : by;
  switch (settlement.status) {
    case "answered":
      if (type === "approval") {
        const answer = settlement.answerText ?? "Decided";
        return `${answer.startsWith("Denied") ? "🚫" : "✅"} ${answer} — by ${who}`;
      }
      return `✅ ${settlement.answerText ?? "Answered"} — answered by ${who}`;
    case "cancelled":
      return settlement.stopped ? `⏹ Stopped by ${who}` : `🚫 Cancelled by ${who}`;
    case "expired":
      return type === "approval" ? "⌛ Expired: nobody approved it in time, so it did not run" : "⌛ Expired: nobody answered in time";
  }
}

/** The settled card: its question, the outcome line, and no components. */
export function renderSettledCard(card: CardView, settlement: Settlement): DiscordMessageBody {
  return {
    content: composeContent(cardHeader(card.spec), [], settlementLine(settlement, card.spec.type)),
    components: [],
    allowed_mentions: { parse: [] },
  };
}
