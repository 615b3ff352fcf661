/** What every crash suite (Slack HTTP, Socket Mode, Discord, the fleet) draws its random choices and waits with. */

/** A small seeded PRNG (mulberry32): CHAOS_SEED replays the random choices of a run (not its timing). */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

/** A whole number from `low` up to, not including, `high`, drawn from `random`. */
export function betweenOf(random: () => number): (low: number, high: number) => number {
  return (low, high) => low + Math.floor(random() * (high - low));
}

/** Resolves true when `arm`'s callback reports a hit, or false after `limitMs`. */
export function waitForHit(arm: (hit: () => void) => void, limitMs: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), limitMs);
    arm(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}
