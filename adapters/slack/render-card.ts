import type { types } from "@slack/bolt";
import type { AskSpec } from "../../src/ask/spec.js";
import type { CardView } from "../../src/ports/platform-adapter.js";
import { inertMarkdown, splitMrkdwn } from "./model-message.js";
import { renderControls } from "./render-controls.js";
import { SLACK_LIMITS } from "./slack-limits.js";
import { blockTextLength, escapeMrkdwn, escapeUntrusted, mrkdwnText, plainText, splitText, textLength, truncate } from "./slack-text.js";

type Block = types.KnownBlock;

export interface SlackMessage {
  text: string;
  blocks: Block[];
}

/** A modal's question never takes more than this many sections, so the modal stays far below its block limit. */
const MAX_MODAL_QUESTION_SECTIONS = 4;
const NOTIFICATION_CHARS = 150;
const NO_NAMES: ReadonlyMap<string, string> = new Map();
const SHORTENED = "\n\n_(shortened)_";

/**
 * The question on a message: one `markdown` block, so the model's Markdown (tables, links with parentheses,
 * `***x***`) renders as it wrote it, cut to `budget` characters within the block's 12,000. Mentions in it ping
 * nobody (`inertMarkdown`). Slack allows this block in messages only: a modal uses `modalQuestionBlocks`.
 */
export function questionBlocks(question: string, budget: number): Block[] {
  const markdown = inertMarkdown(question, NO_NAMES);
  const limit = Math.min(budget, SLACK_LIMITS.markdownBlockChars);
  // The cut closes a code fence it lands in, so the note after it does not read as code.
  const shortened =
    textLength(markdown) > limit ? `${splitMrkdwn(markdown, limit - textLength(SHORTENED))[0] ?? ""}${SHORTENED}` : markdown;
  return [{ type: "markdown", text: shortened.trim() === "" ? "-" : shortened }];
}

/**
 * The question in a modal, where Slack has no `markdown` block: mrkdwn sections of at most 3,000 characters,
 * escaped whole so the text shows as typed and a `<!channel>` or `<@U…>` in it pings nobody.
 */
export function modalQuestionBlocks(question: string, budget: number): Block[] {
  const escaped = escapeUntrusted(question.replace(/\r\n/g, "\n"));
  const shortened = textLength(escaped) > budget ? `${truncate(escaped, budget - 14)} _(shortened)_` : escaped;
  return splitText(shortened, SLACK_LIMITS.sectionTextChars)
    .slice(0, MAX_MODAL_QUESTION_SECTIONS)
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

/** Draws an ask as a card: title, question, controls with Cancel (and Stop), and who may answer until when. */
export function renderCard(card: CardView): SlackMessage {
  const { spec, askId } = card;
  const header = titleBlocks(spec);
  const controls = renderControls(askId, spec, card.offersStop ? card.sessionId : undefined);
  const footer: Block[] = [
    { type: "context", elements: [mrkdwnText(`👤 ${answerersText(card)} · ⏰ Expires ${deadlineText(card.deadline)}`)] },
  ];
  const used = blockTextLength([...header, ...controls, ...footer]);
  const budget = SLACK_LIMITS.messageBlockTextChars - used;
  return { text: notificationText(spec), blocks: [...header, ...questionBlocks(spec.question, budget), ...controls, ...footer] };
}
