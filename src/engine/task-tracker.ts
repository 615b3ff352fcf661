/** Keeps every background promise, so tests and shutdown can wait for the bot to go quiet. */
export class TaskTracker {
  private readonly running = new Set<Promise<void>>();

  run(task: () => Promise<void>, onError: (error: unknown) => void): void {
    const promise = Promise.resolve()
      .then(task)
      .catch(onError)
      .finally(() => this.running.delete(promise));
    this.running.add(promise);
  }

  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}
