import { truncate } from "../../src/ports/truncate.js";
import { SLACK_LIMITS } from "./slack-limits.js";

/** Slack counts its limits in characters (code points), the shared `truncate`'s default unit. */
export { truncate };

/** Length as Slack counts it, close enough: code points, so emoji are not split in half. */
export function textLength(text: string): number {
  return Array.from(text).length;
}

/** A plain_text object; Slack rejects empty text objects, so blank text becomes a dash. */
export function plainText(text: string, limit: number = SLACK_LIMITS.textObjectChars): { type: "plain_text"; text: string; emoji: true } {
  const value = text.trim() === "" ? "-" : truncate(text, limit);
  return { type: "plain_text", text: value, emoji: true };
}

export function mrkdwnText(text: string, limit: number = SLACK_LIMITS.textObjectChars): { type: "mrkdwn"; text: string } {
  const value = text.trim() === "" ? "-" : truncate(text, limit);
  return { type: "mrkdwn", text: value };
}

/** Mentions and channel links the core writes on purpose (`<@U123>`, `<#C123>`); everything else in `<…>` is escaped. */
const SLACK_REFERENCE = /<([@#][A-Z0-9_]+(?:\|[^<>]*)?)>/g;

/**
 * Escapes `&`, `<` and `>` as Slack requires, so model text cannot ping `<!channel>` or forge links,
 * while keeping user and channel mentions written by the core.
 */
export function escapeMrkdwn(text: string): string {
  const kept: string[] = [];
  const marked = text.replace(/\uE000/g, "").replace(SLACK_REFERENCE, (_match, inner: string) => {
    kept.push(inner);
    return `\uE000${kept.length - 1}\uE000`;
  });
  const escaped = marked.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  return escaped.replace(/\uE000(\d+)\uE000/g, (_match, index: string) => `<${kept[Number(index)] ?? ""}>`);
}

/**
 * Escapes `&`, `<` and `>` everywhere, mentions included: for text a model or a person wrote (questions, options,
 * answers), where `<@U123>` or `<!channel>` must show as typed and ping nobody.
 */
export function escapeUntrusted(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/**
 * Splits text into pieces of at most `limit` characters, preferring paragraph, then line, then word breaks.
 * Returns at least one piece.
 */
export function splitText(text: string, limit: number): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (textLength(rest) > limit) {
    const window = Array.from(rest).slice(0, limit).join("");
    const cut = bestBreak(window);
    pieces.push(window.slice(0, cut).trimEnd());
    rest = rest.slice(cut).replace(/^\n+/, "");
  }
  if (rest.length > 0 || pieces.length === 0) pieces.push(rest);
  return pieces.filter((piece, index) => piece.length > 0 || index === 0);
}

function bestBreak(window: string): number {
  const minimum = Math.floor(window.length / 2);
  for (const separator of ["\n\n", "\n", " "]) {
    const at = window.lastIndexOf(separator);
    if (at >= minimum) return at + separator.length;
  }
  return window.length;
}

/** Sums every `text` string inside blocks: what Slack weighs for `msg_blocks_too_long`. */
export function blockTextLength(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + blockTextLength(item), 0);
  if (typeof value !== "object" || value === null) return 0;
  let sum = 0;
  for (const [key, item] of Object.entries(value)) {
    if (key === "text" && typeof item === "string") sum += textLength(item);
    else sum += blockTextLength(item);
  }
  return sum;
}
