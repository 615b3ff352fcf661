import { escapeMrkdwn, splitText, textLength } from "./slack-text.js";

type Escape = (text: string) => string;

const FENCE = /^\s*```/;

/**
 * Converts the model's Markdown to Slack mrkdwn: bold, italics, strike, links, headings and bullets.
 * Code spans and fenced blocks are kept verbatim apart from the escaping Slack needs everywhere.
 * `escapeText` decides whether `<@U…>` mentions survive: `escapeMrkdwn` keeps them, `escapeUntrusted` does not.
 */
export function markdownToMrkdwn(markdown: string, escapeText: Escape = escapeMrkdwn): string {
  let inFence = false;
  return markdown
    .replace(/\r\n/g, "\n")
    .split("\n")
    .map((line) => {
      if (FENCE.test(line)) {
        inFence = !inFence;
        return "```";
      }
      return inFence ? escapeText(line) : convertLine(line, escapeText);
    })
    .join("\n");
}

function convertLine(line: string, escapeText: Escape): string {
  const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
  if (heading) return `*${convertInline(heading[1] ?? "", escapeText)}*`;
  const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
  if (bullet) return `${bullet[1] ?? ""}• ${convertInline(bullet[2] ?? "", escapeText)}`;
  return convertInline(line, escapeText);
}

function convertInline(text: string, escapeText: Escape): string {
  // Code spans are cut out first so their contents are not restyled.
  const parts = text.split(/(`[^`]+`)/);
  return parts.map((part, index) => (index % 2 === 1 ? escapeText(part) : convertStyles(part, escapeText))).join("");
}

function convertStyles(text: string, escapeText: Escape): string {
  const links: string[] = [];
  const keep = (link: string) => {
    links.push(link);
    return `\uE001${links.length - 1}\uE001`;
  };
  const withoutLinks = text
    .replace(/[\uE001\uE002]/g, "")
    .replace(/\[([^\]]+)\]\((https?:\/\/[^\s)]+)\)/g, (_match, label: string, url: string) =>
      keep(`<${url.replace(/[<>|]/g, "")}|${escapeText(label).replace(/\|/g, "¦")}>`),
    )
    .replace(/<(https?:\/\/[^\s<>|]+)>/g, (_match, url: string) => keep(`<${url}>`));
  const styled = escapeText(withoutLinks)
    .replace(/\*\*(.+?)\*\*/g, "\uE002$1\uE002")
    .replace(/__(.+?)__/g, "\uE002$1\uE002")
    .replace(/(^|[^*\w])\*(?!\s)([^*]+?)\*(?!\w)/g, "$1_$2_")
    .replace(/~~(.+?)~~/g, "~$1~")
    .replace(/\uE002/g, "*");
  return styled.replace(/\uE001(\d+)\uE001/g, (_match, index: string) => links[Number(index)] ?? "");
}

/**
 * Splits converted text into messages of at most `limit` characters without breaking a code fence:
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
