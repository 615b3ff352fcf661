/**
 * Variables that look meant for Parley but are not among the ones it reads (`SLACK_TOKEN`, `DISCORD_BOT_TOKEN`,
 * `SLACK_SIGNINGSECRET`): left alone, a typo silently starts the terminal instead of the platform.
 */

/**
 * Prefixes of Parley's platforms: an unknown variable with one of them is refused even when no known name is
 * close. Not `ANTHROPIC_`: the Anthropic SDK and other tools on the same machine read `ANTHROPIC_` variables of
 * their own (`ANTHROPIC_AUTH_TOKEN`, `ANTHROPIC_LOG`), so those are refused only when close to a known name.
 */
const OWN_PREFIXES = ["SLACK_", "DISCORD_"];

/** One line per unknown variable, naming the known one it probably meant; empty when there is none. */
export function unknownVariableProblems(environment: Record<string, string | undefined>, known: readonly string[]): string[] {
  const knownSet = new Set(known);
  const problems: string[] = [];
  for (const [name, value] of Object.entries(environment)) {
    // An empty value counts as unset, like everywhere else (a copied .env.example has empty lines).
    if (knownSet.has(name) || !value?.trim()) continue;
    const upper = name.toUpperCase();
    const meant = closestKnown(upper, known);
    if (meant) problems.push(`${name}: is not a variable Parley reads; did you mean ${meant}?`);
    else if (OWN_PREFIXES.some((prefix) => upper.startsWith(prefix))) {
      const family = known.filter((candidate) => candidate.startsWith(`${upper.split("_")[0]}_`));
      problems.push(`${name}: is not a variable Parley reads; it reads ${family.join(", ")}`);
    }
  }
  return problems;
}

/** The known name `name` is a slip of, if any; among several, the one fewest edits away, then the first listed. */
function closestKnown(name: string, known: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const candidate of known) {
    if (!isSlipOf(name, candidate)) continue;
    const distance = editDistance(name, candidate);
    if (!best || distance < best.distance) best = { name: candidate, distance };
  }
  return best?.name;
}

/**
 * A slip: the same letters with other separators (`SLACK_SIGNINGSECRET`), one or two letters off
 * (`SLACK_APP_TOKN`; one for short names, so `HOME` is not `HOST`), or one word more or fewer with at least
 * two words shared and the first one the same (`SLACK_TOKEN`, `DISCORD_BOT_TOKEN`, `ANTHROPIC_KEY`).
 */
function isSlipOf(name: string, known: string): boolean {
  const letters = name.replace(/[^A-Z0-9]/g, "");
  const knownLetters = known.replace(/[^A-Z0-9]/g, "");
  const allowed = knownLetters.length <= 6 ? 1 : 2;
  if (editDistance(letters, knownLetters) <= allowed) return true;
  const words = name.split("_").filter(Boolean);
  const knownWords = known.split("_");
  if (words[0] !== knownWords[0] || Math.abs(words.length - knownWords.length) !== 1) return false;
  const [shorter, longer] = words.length < knownWords.length ? [words, knownWords] : [knownWords, words];
  return shorter.length >= 2 && shorter.every((word) => longer.includes(word));
}

/** Levenshtein distance, with a swap of two neighbouring letters counted as one edit (`LEVLE`). */
function editDistance(left: string, right: string): number {
  const rows = Array.from({ length: left.length + 1 }, (_, index) => [index, ...Array<number>(right.length).fill(0)]);
  for (let column = 0; column <= right.length; column++) rows[0]![column] = column;
  for (let row = 1; row <= left.length; row++) {
    for (let column = 1; column <= right.length; column++) {
      const cost = left[row - 1] === right[column - 1] ? 0 : 1;
      let distance = Math.min(rows[row - 1]![column]! + 1, rows[row]![column - 1]! + 1, rows[row - 1]![column - 1]! + cost);
      if (row > 1 && column > 1 && left[row - 1] === right[column - 2] && left[row - 2] === right[column - 1])
        distance = Math.min(distance, rows[row - 2]![column - 2]! + 1);
      rows[row]![column] = distance;
    }
  }
  return rows[left.length]![right.length]!;
}
