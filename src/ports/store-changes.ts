/**
 * A change another process committed to the shared store, told at once (PostgreSQL LISTEN/NOTIFY) so a Stop or an
 * answer taken elsewhere reaches this process now rather than at its next poll. A hint to read again, never the
 * data itself: a feed may drop a notice (a reconnect), so polling stays as the backstop.
 */
export type StoreChange = { kind: "stop-requested"; sessionId: string } | { kind: "ask-ended"; askId: string };

/** Where a store tells the processes sharing it what changed; every process hears every change, its own included. */
export interface StoreChanges {
  /** Calls `listener` for every change committed from now on; returns the unsubscribe. */
  subscribe(listener: (change: StoreChange) => void): () => void;
}
