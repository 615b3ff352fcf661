import { setTimeout as delay } from "node:timers/promises";
import { ModelError } from "../ports/errors.js";
import type { ModelClient, ModelRequest, ModelResponse } from "../ports/model-client.js";

/** The default of MODEL_RETRY_MAX_S: how long a turn keeps retrying a busy model before it fails. */
export const DEFAULT_MODEL_RETRY_MAX_S = 300;
/** The first wait after a transient failure; the client has already retried twice within about a second. */
export const FIRST_RETRY_DELAY_MS = 5_000;
/** Backoff doubles up to this: 5, 10, 20, 40, 60, 60 … seconds. */
export const MAX_RETRY_DELAY_MS = 60_000;
/** A Stop taken by another process only shows in the store: the wait looks at it this often. */
export const STOP_CHECK_INTERVAL_MS = 1_000;

/** How the loop waits out a busy model. */
export interface ModelRetryPolicy {
  /** The longest the retries of one model call may take, from its first failure; 0 never retries. */
  maxWaitMs: number;
  /** Resolves after `ms`, or at once when the signal aborts (never rejects). */
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** In [0, 1): spreads apart the retries of many turns that hit the same outage. */
  random: () => number;
}

export function createModelRetryPolicy(overrides: Partial<ModelRetryPolicy> = {}): ModelRetryPolicy {
  return {
    maxWaitMs: overrides.maxWaitMs ?? DEFAULT_MODEL_RETRY_MAX_S * 1000,
    sleep: overrides.sleep ?? abortableSleep,
    random: overrides.random ?? Math.random,
  };
}

export interface CallModelDependencies {
  model: ModelClient;
  retry: ModelRetryPolicy;
  clock: () => number;
  /** Aborted by Stop in this process. */
  signal: AbortSignal;
  /** Aborted when the process shuts down: a wait ends without ending the turn. */
  shutdown?: AbortSignal | undefined;
  /** The store's Stop flag, set by any process. */
  isStopRequested: () => Promise<boolean>;
  progress: (text: string, options?: { immediate?: boolean }) => void;
}

export type ModelCallResult =
  | { ok: true; response: ModelResponse }
  | { ok: false; outcome: "cancelled" }
  | { ok: false; outcome: "shutdown" }
  | { ok: false; outcome: "failed"; error: string; cause: unknown };

/**
 * One model call, retried with backoff while the provider is busy (transient errors), for at most
 * `retry.maxWaitMs`; a permanent error fails at once. Nothing is written here: the caller commits the one
 * response that came back, so a retried call can never store a second assistant message or count usage twice.
 */
export async function callModel(deps: CallModelDependencies, request: ModelRequest): Promise<ModelCallResult> {
  let firstFailureAt: number | undefined;
  let waitedMs = 0;
  for (let attempt = 1; ; attempt++) {
    try {
      // The Stop signal goes with the call: a Stop (here, or seen in the store) ends a slow model call at once.
      return { ok: true, response: await deps.model.createMessage(request, deps.signal) };
    } catch (error) {
      if (deps.signal.aborted) return { ok: false, outcome: "cancelled" };
      if (!(error instanceof ModelError)) return failed(`internal error: ${error instanceof Error ? error.message : String(error)}`, error);
      if (error.kind === "permanent")
        return failed(`the model API refused the request (${error.message}); the details are in Parley's log`, error);
      firstFailureAt ??= deps.clock();
      // Whichever is larger: a clock frozen by a test cannot make the retries last for ever.
      const elapsedMs = Math.max(deps.clock() - firstFailureAt, waitedMs);
      const waitMs = nextDelay(attempt, error.retryAfterMs, deps.retry.random);
      // Never wait past the bound: give up now rather than fail after a wait that cannot end in a try.
      if (elapsedMs + waitMs > deps.retry.maxWaitMs) return failed(gaveUp(error.message, attempt, elapsedMs, deps.retry.maxWaitMs), error);
      deps.progress(`Claude is busy (${error.message}); retrying in ${Math.ceil(waitMs / 1000)} s (attempt ${attempt + 1})`, {
        immediate: true,
      });
      const interrupted = await waitUnlessStopped(deps, waitMs);
      if (interrupted) return { ok: false, outcome: interrupted };
      waitedMs += waitMs;
      deps.progress(`Thinking… (attempt ${attempt + 1})`);
    }
  }
}

/** The provider's retry-after when it gave one (at least a second), else exponential backoff with ±20 % jitter. */
export function nextDelay(failedAttempt: number, retryAfterMs: number | undefined, random: () => number): number {
  if (retryAfterMs !== undefined) return Math.max(1000, Math.ceil(retryAfterMs));
  const base = Math.min(MAX_RETRY_DELAY_MS, FIRST_RETRY_DELAY_MS * 2 ** (failedAttempt - 1));
  return Math.round(base * (0.8 + 0.4 * random()));
}

/** Waits in slices so a Stop from this process (the signal) or another (the store) ends the wait within a second. */
async function waitUnlessStopped(deps: CallModelDependencies, waitMs: number): Promise<"cancelled" | "shutdown" | undefined> {
  const signal = deps.shutdown ? AbortSignal.any([deps.signal, deps.shutdown]) : deps.signal;
  for (let leftMs = waitMs; leftMs > 0; leftMs -= STOP_CHECK_INTERVAL_MS) {
    await deps.retry.sleep(Math.min(leftMs, STOP_CHECK_INTERVAL_MS), signal);
    if (deps.signal.aborted || (await deps.isStopRequested())) return "cancelled";
    if (deps.shutdown?.aborted) return "shutdown";
  }
  return undefined;
}

function gaveUp(reason: string, attempts: number, elapsedMs: number, maxWaitMs: number): string {
  if (maxWaitMs === 0) return `Claude is busy (${reason}) and retrying is off (MODEL_RETRY_MAX_S is 0)`;
  const tries = attempts === 1 ? "" : ` through ${attempts} attempts over ${formatDuration(elapsedMs)}`;
  return `Claude stayed busy (${reason})${tries}, and Parley retries for at most ${formatDuration(maxWaitMs)}`;
}

function formatDuration(milliseconds: number): string {
  const seconds = Math.round(milliseconds / 1000);
  if (seconds < 60) return `${seconds} s`;
  return seconds % 60 === 0 ? `${seconds / 60} min` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/**
 * Thrown out of the loop when the process shuts down during a wait: nothing is written, the session stays
 * running, and start-up recovery runs the turn again from its last step.
 */
export class TurnInterrupted extends Error {
  constructor() {
    super("the process shut down while the turn waited for a busy model");
    this.name = "TurnInterrupted";
  }
}

function failed(error: string, cause: unknown): ModelCallResult {
  return { ok: false, outcome: "failed", error, cause };
}

async function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  await delay(ms, undefined, { signal }).catch(() => {});
}
