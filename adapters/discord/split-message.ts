import { DISCORD_LIMITS } from "./discord-limits.js";

const FENCE = /^\s*```/;

/**
 * Splits Markdown into messages of at most 2,000 characters, at line breaks where possible.
 * A code block cut in two is closed and reopened, so both halves still render as code.
 */
export function splitMessage(markdown: string, limit: number = DISCORD_LIMITS.contentChars): string[] {
  const text = markdown.trim();
  if (text.length === 0) return [];
  const chunks: string[] = [];
  let current = "";
  let openFence: string | undefined;
  const flush = () => {
    if (current.trim().length > 0) chunks.push(openFence === undefined ? current : `${current}\n\`\`\``);
    current = openFence ?? "";
  };
  for (const rawLine of text.split("\n")) {
    // Room for the closing fence a flush may add, counting a fence this very line opens.
    const reserve = openFence !== undefined || FENCE.test(rawLine) ? 4 : 0;
    for (const line of hardWrap(rawLine, limit - 8 - (openFence?.length ?? 0))) {
      const candidate = current === "" ? line : `${current}\n${line}`;
      if (candidate.length + reserve > limit) {
        flush();
        current = current === "" ? line : `${current}\n${line}`;
      } else current = candidate;
    }
    if (FENCE.test(rawLine)) openFence = openFence === undefined ? rawLine.trim() : undefined;
  }
  if (current.trim().length > 0) chunks.push(current);
  return chunks;
}

/** Cuts one overlong line, preferring spaces; a line shorter than the limit comes back as is. */
function hardWrap(line: string, limit: number): string[] {
  const pieces: string[] = [];
  let rest = line;
  while (rest.length > limit) {
    const space = rest.lastIndexOf(" ", limit);
    const cut = space > limit / 2 ? space : limit;
    pieces.push(rest.slice(0, cut));
    rest = rest.slice(cut).trimStart();
  }
  pieces.push(rest);
  return pieces;
}
