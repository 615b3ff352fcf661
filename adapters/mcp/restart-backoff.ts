/** How long to wait before starting a failed server again: doubling from the first delay up to the cap. */
export interface RestartBackoff {
  initialDelayMs: number;
  maxDelayMs: number;
}

/** About a second first, then doubling, never more than a minute apart. */
export const DEFAULT_RESTART_BACKOFF: RestartBackoff = { initialDelayMs: 1_000, maxDelayMs: 60_000 };

/** The delay before restart number `attempt` (0 for the first restart after a failure). */
export function restartDelayMs(backoff: RestartBackoff, attempt: number): number {
  return Math.min(backoff.maxDelayMs, backoff.initialDelayMs * 2 ** Math.min(attempt, 30));
}
