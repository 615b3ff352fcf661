/**
 * How a limit counts text: `code-points` (one per character, an emoji is 1; Slack, and the core's own wording) or
 * `utf-16` (JavaScript's `.length`, an emoji outside the BMP is 2; what discord.js validates against).
 */
export type TextUnit = "code-points" | "utf-16";

const ELLIPSIS = "…";

/**
 * Cuts text to at most `limit` units, marking the cut with an ellipsis; text within the limit comes back unchanged.
 * A cut never falls inside a character, so an emoji is kept whole or dropped, never split into half a surrogate pair.
 */
export function truncate(text: string, limit: number, unit: TextUnit = "code-points"): string {
  // Cheap exits first: a UTF-16 length within the limit is within it in code points too.
  if (text.length <= limit) return text;
  if (unit === "code-points" && codePointCount(text) <= limit) return text;
  if (limit < 1) return "";
  const room = limit - ELLIPSIS.length;
  let used = 0;
  let end = 0;
  for (const character of text) {
    const size = unit === "utf-16" ? character.length : 1;
    if (used + size > room) break;
    used += size;
    end += character.length;
  }
  return text.slice(0, end) + ELLIPSIS;
}

function codePointCount(text: string): number {
  let count = 0;
  for (const _character of text) count++;
  return count;
}
