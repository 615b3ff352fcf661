import type { AskResult } from "../ask/result.js";
import type { Ask } from "../ports/session-store.js";

type Waiter = (result: AskResult | undefined) => void;

/** Who waits on which ask in this process: a claim wakes them at once, with the result as it was taken. */
export class AskEndings {
  private readonly waiters = new Map<string, Set<Waiter>>();
  private readonly listeners: Array<(ask: Ask) => void> = [];

  /** An ask ended here (after its claim committed). */
  ended(ask: Ask, result: AskResult): void {
    for (const wake of this.waiters.get(ask.id) ?? []) wake(result);
    for (const listener of this.listeners) listener(ask);
  }

  /** An ask ended in another process: whoever waits here reads it again from the store. */
  endedElsewhere(askId: string): void {
    for (const wake of this.waiters.get(askId) ?? []) wake(undefined);
  }

  /** Called after every ending in this process, with the ended ask. */
  onEnded(listener: (ask: Ask) => void): void {
    this.listeners.push(listener);
  }

  /** Resolves with the result when the ask ends here within `waitMs`; undefined on timeout or abort. */
  next(askId: string, waitMs: number, signal?: AbortSignal): Promise<AskResult | undefined> {
    return new Promise((resolve) => {
      const set = this.waiters.get(askId) ?? new Set<Waiter>();
      this.waiters.set(askId, set);
      const done: Waiter = (result) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        set.delete(done);
        if (set.size === 0) this.waiters.delete(askId);
        resolve(result);
      };
      const onAbort = () => done(undefined);
      const timer = setTimeout(() => done(undefined), waitMs);
      if (signal?.aborted) return done(undefined);
      signal?.addEventListener("abort", onAbort, { once: true });
      set.add(done);
    });
  }
}
