const DEFAULT_CAPACITY = 10_000;

/** A bounded set of ids already handled; the oldest are forgotten first, long after any replay could come. */
export class SeenIds {
  private readonly ids = new Set<string>();

  constructor(private readonly capacity = DEFAULT_CAPACITY) {}

  /** Records the id; false when it was already there. */
  add(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.ids.add(id);
    if (this.ids.size > this.capacity) {
      const oldest = this.ids.values().next().value;
      if (oldest !== undefined) this.ids.delete(oldest);
    }
    return true;
  }
}
