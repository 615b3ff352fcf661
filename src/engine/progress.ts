import type { Logger } from "../logger.js";
import type { PlatformAdapter, ProgressView } from "../ports/platform-adapter.js";
import type { RichText } from "../ports/rich-text.js";

export const PROGRESS_INTERVAL_MS = 1000;
/** A run this short (a step or two after an answer or a message) still has its person watching the thread. */
export const IN_PLACE_WITHIN_MS = 60_000;

/**
 * A turn's status line while it works, edited at most once per interval; the last text always lands, and what the
 * turn says next takes its place (`handOver`). Unless showing is free, the first edit also waits an interval, so a
 * step that ends within it shows nothing at all.
 */
export class ProgressReporter {
  private lastSentAt: number;
  /** When the run began, on the engine's clock: right after the answer or message that started it. */
  private readonly startedAt: number;
  private pending: RichText | undefined;
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly adapter: PlatformAdapter,
    private readonly view: Omit<ProgressView, "text" | "done">,
    private readonly logger: Logger,
    private readonly clock: () => number,
    private readonly intervalMs = PROGRESS_INTERVAL_MS,
  ) {
    this.lastSentAt = adapter.freeProgress ? 0 : Date.now();
    this.startedAt = clock();
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

  /**
   * What the turn says next (a card, the answer) takes the status message's place: the turn's key is returned to
   * name it. After a long run the person who set it going may have left, and an edit notifies nobody: the status
   * then ends as `instead` and the next message is posted on its own (undefined).
   */
  async handOver(instead: RichText): Promise<string | undefined> {
    if (this.clock() - this.startedAt >= IN_PLACE_WITHIN_MS) {
      await this.finish(instead);
      return undefined;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.pending = undefined;
    await this.chain;
    return this.view.turnKey;
  }

  private flush(done: boolean): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const text = this.pending;
    if (text === undefined) return;
    this.pending = undefined;
    this.lastSentAt = Date.now();
    // Edits are chained so they reach the platform in order.
    this.chain = this.chain.then(() =>
      this.adapter.showProgress({ ...this.view, text, done }).catch((error: unknown) => {
        this.logger.warn({ err: error, sessionId: this.view.sessionId }, "progress-update failed");
      }),
    );
  }
}
