import { SLACK_LIMITS } from "./slack-limits.js";
import { escapeUntrusted, splitText, textLength, truncate } from "./slack-text.js";

/** `<@U…>`, `<!here>`, `<!subteam^S…|name>`, `<#C…>`: Slack's own references, which ping or link wherever Slack parses them. */
const REFERENCE = /<([@!#])([^<>|\s]+)(?:\|([^<>]*))?>/g;
const USER_ID = /^[UW][A-Z0-9_]+$/;
/** Slack's `<url|label>` link: in a markdown block it would show as typed, so it becomes a Markdown link. */
const SLACK_LINK = /<(https?:\/\/[^<>|\s]+)(?:\|([^<>]*))?>/g;
/** A word joiner after `@`: the text still reads `@here`, but it is not the keyword Slack notifies on. */
const INERT_AT = "@\u2060";

/** Everyone the model's text names with `<@U…>`, so their names can be looked up before it is rendered. */
export function mentionedUserIds(markdown: string): string[] {
  const ids = new Set<string>();
  for (const [, sigil, id] of markdown.matchAll(REFERENCE)) if (sigil === "@" && id && USER_ID.test(id)) ids.add(id);
  return [...ids];
}

/**
 * The model's Markdown made inert for a `markdown` block: a user mention becomes the person's name (or their id
 * when `names` does not know them), `@here`/`@channel` and group mentions become inert text, Slack's `<url|label>`
 * becomes a Markdown link. Everything else stays as the model wrote it.
 */
export function inertMarkdown(markdown: string, names: ReadonlyMap<string, string>): string {
  return (
    markdown
      .replace(/\r\n/g, "\n")
      .replace(SLACK_LINK, (_match, url: string, label?: string) => (label ? `[${label}](${url})` : url))
      .replace(REFERENCE, (_match, sigil: string, id: string, label?: string) => {
        if (sigil === "#") return `#${label ?? id}`;
        if (sigil === "@") return `${INERT_AT}${names.get(id) ?? label?.replace(/^@/, "") ?? id}`;
        // <!here>, <!channel>, <!everyone>, <!subteam^S1|@team>, <!date^…|fallback>: the label when there is one.
        return label !== undefined ? label.replace(/^@/, INERT_AT) : `${INERT_AT}${id.split("^")[0]}`;
      })
      // Typed without brackets too, in case Slack's Markdown reads them as its keywords.
      .replace(/@(here|channel|everyone)\b/gi, `${INERT_AT}$1`)
  );
}

/**
 * The model's Markdown as Slack messages: each a `markdown` block (standard Markdown, made for LLM output) under
 * the 12,000-character limit, with a plain `text` fallback for notifications. The agent's text never pings anyone
 * (see `inertMarkdown`).
 */
export function modelMessages(markdown: string, names: ReadonlyMap<string, string>): Array<{ text: string; blocks: unknown[] }> {
  return splitMrkdwn(inertMarkdown(markdown, names), SLACK_LIMITS.markdownBlockChars).map((piece) => ({
    // `text` is parsed as mrkdwn in notifications: escaped, so it cannot ping or link either.
    text: escapeUntrusted(truncate(piece, SLACK_LIMITS.messageTextChars - 200)),
    blocks: [{ type: "markdown", text: piece }],
  }));
}

/**
 * Splits Markdown or mrkdwn into messages of at most `limit` characters without breaking a code fence:
 * a piece that ends inside a fence closes it, and the next piece reopens it.
 */
export function splitMrkdwn(text: string, limit: number): string[] {
  const reserve = 8;
  const pieces = splitText(text, limit - reserve);
  const result: string[] = [];
  let openFence = false;
  for (const piece of pieces) {
    let current = openFence ? `\`\`\`\n${piece}` : piece;
    const fences = (piece.match(/```/g) ?? []).length;
    if (fences % 2 === 1) openFence = !openFence;
    if (openFence) current = `${current}\n\`\`\``;
    result.push(current);
  }
  return result.filter((piece) => textLength(piece.trim()) > 0);
}
