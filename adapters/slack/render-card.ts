import type { types } from "@slack/bolt";
import type { AskSpec } from "../../src/ask/spec.js";
import type { CardView } from "../../src/ports/platform-adapter.js";
import { markdownToMrkdwn } from "./markdown-to-mrkdwn.js";
import { renderControls } from "./render-controls.js";
import { SLACK_LIMITS } from "./slack-limits.js";
import { blockTextLength, escapeMrkdwn, escapeUntrusted, mrkdwnText, plainText, splitText, textLength, truncate } from "./slack-text.js";

type Block = types.KnownBlock;

export interface SlackMessage {
  text: string;
  blocks: Block[];
}

/** Question sections never take more than this many blocks, so a card stays far below the block limit. */
const MAX_QUESTION_SECTIONS = 4;
const NOTIFICATION_CHARS = 150;

/**
 * The question as mrkdwn sections of at most 3,000 characters each, cut to `budget` characters in all.
 * The model wrote it, so every `<…>` is escaped: a `<!channel>` or `<@U…>` in a question pings nobody.
 */
export function questionBlocks(question: string, budget: number): Block[] {
  const converted = markdownToMrkdwn(question, escapeUntrusted);
  const shortened = textLength(converted) > budget ? `${truncate(converted, budget - 14)} _(shortened)_` : converted;
  return splitText(shortened, SLACK_LIMITS.sectionTextChars)
    .slice(0, MAX_QUESTION_SECTIONS)
    .map((piece) => ({ type: "section", text: mrkdwnText(piece, SLACK_LIMITS.sectionTextChars) }));
}

export function titleBlocks(spec: AskSpec): Block[] {
  return spec.title ? [{ type: "header", text: plainText(spec.title, SLACK_LIMITS.headerChars) }] : [];
}

/** "Expires …" in each reader's own time zone, with a UTC fallback for clients that cannot format dates. */
export function deadlineText(deadline: number): string {
  const seconds = Math.floor(deadline / 1000);
  const fallback = `${new Date(deadline).toISOString().slice(0, 16).replace("T", " ")} UTC`;
  return `<!date^${seconds}^{date_short_pretty} at {time}|${fallback}>`;
}

export function answerersText(card: Pick<CardView, "answerers" | "anyoneInThread">): string {
  if (card.anyoneInThread || card.answerers.length === 0) return "Anyone in this thread can answer";
  const people = card.answerers.slice(0, 20).map((id) => `<@${escapeMrkdwn(id)}>`);
  return `Only ${people.join(", ")} or an admin can answer`;
}

/** The notification text that travels with the blocks (shown in push notifications and old clients). */
export function notificationText(spec: AskSpec): string {
  return escapeUntrusted(truncate(`❓ ${spec.title ? `${spec.title}: ` : ""}${spec.question}`, NOTIFICATION_CHARS));
}

/** Draws an ask as a card: title, question, controls with Cancel, and who may answer until when. */
export function renderCard(card: CardView): SlackMessage {
  const { spec, askId } = card;
  const header = titleBlocks(spec);
  const controls = renderControls(askId, spec);
  const footer: Block[] = [
    { type: "context", elements: [mrkdwnText(`👤 ${answerersText(card)} · ⏰ Expires ${deadlineText(card.deadline)}`)] },
  ];
  const used = blockTextLength([...header, ...controls, ...footer]);
  const budget = Math.min(SLACK_LIMITS.sectionTextChars * MAX_QUESTION_SECTIONS, SLACK_LIMITS.messageBlockTextChars - used);
  return { text: notificationText(spec), blocks: [...header, ...questionBlocks(spec.question, budget), ...controls, ...footer] };
}
