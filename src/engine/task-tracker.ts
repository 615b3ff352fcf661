/** How many background tasks (settles, resumes) may run at once in one process; the rest wait in order. */
export const MAX_CONCURRENT_TASKS = 256;

/**
 * Runs background work after an ack, at most MAX_CONCURRENT_TASKS at once, and keeps every promise so tests
 * and shutdown can wait for the bot to go quiet. Bounding it keeps a burst of taps from queueing the acks of
 * later taps behind the CPU work (SDK calls, Web API calls) of earlier resumes.
 */
export class TaskTracker {
  private readonly running = new Set<Promise<void>>();
  private readonly waiting: Array<() => void> = [];
  private active = 0;

  constructor(private readonly limit = MAX_CONCURRENT_TASKS) {}

  run(task: () => Promise<void>, onError: (error: unknown) => void): void {
    const promise = this.slot()
      .then(task)
      .catch(onError)
      .finally(() => {
        this.running.delete(promise);
        this.active--;
        this.waiting.shift()?.();
      });
    this.running.add(promise);
  }

  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  /** Resolves when the task may start: at once in a later event-loop turn, or when a running task ends. */
  private slot(): Promise<void> {
    return new Promise<void>((resolve) => {
      const start = () => {
        this.active++;
        // setImmediate, not a microtask: requests already waiting on the socket are read and acked first.
        setImmediate(resolve);
      };
      if (this.active < this.limit) start();
      else this.waiting.push(start);
    });
  }
}
