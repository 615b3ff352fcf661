import type { Logger } from "../logger.js";
import type { PlatformAdapter, ProgressView } from "../ports/platform-adapter.js";
import type { RichText } from "../ports/rich-text.js";

export const PROGRESS_INTERVAL_MS = 1000;

/**
 * One status message per turn, edited at most once per interval; the last text always lands. Unless showing is free,
 * the first edit also waits an interval, so a step that ends within it costs one edit, not "Thinking…" then another.
 */
export class ProgressReporter {
  private lastSentAt: number;
  private pending: RichText | undefined;
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly adapter: PlatformAdapter,
    private readonly view: Omit<ProgressView, "text" | "done">,
    private readonly logger: Logger,
    private readonly intervalMs = PROGRESS_INTERVAL_MS,
  ) {
    this.lastSentAt = adapter.freeProgress ? 0 : Date.now();
  }

  /** Shows `text` when the interval allows; `immediate` sends it now (a notice that must land before a wait). */
  update(text: RichText, options?: { immediate?: boolean }): void {
    this.pending = text;
    const wait = this.lastSentAt + this.intervalMs - Date.now();
    if (wait <= 0 || options?.immediate) this.flush(false);
    else this.timer ??= setTimeout(() => this.flush(false), wait);
  }

  /** Ends the turn's status message and waits for every edit to land. */
  async finish(text: RichText): Promise<void> {
    this.pending = text;
    this.flush(true);
    await this.chain;
  }

  /** The turn now waits on a person: the message says so and stays, for the resume to edit. */
  async hold(text: RichText): Promise<void> {
    this.pending = text;
    this.flush(false, true);
    await this.chain;
  }

  private flush(done: boolean, waiting = false): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const text = this.pending;
    if (text === undefined) return;
    this.pending = undefined;
    this.lastSentAt = Date.now();
    // Edits are chained so they reach the platform in order.
    this.chain = this.chain.then(() =>
      this.adapter.showProgress({ ...this.view, text, done, ...(waiting ? { waiting } : {}) }).catch((error: unknown) => {
        this.logger.warn({ err: error, sessionId: this.view.sessionId }, "progress-update failed");
      }),
    );
  }
}
