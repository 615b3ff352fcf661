/** Slack redelivers an event not acknowledged within 3 s; a hold ends before that, stored or not. */
export const MAX_ACK_HOLD_MS = 2000;

/**
 * Holds the acknowledgement of each Events API delivery Parley reads (a message or a mention) until Parley has
 * stored it: an event acknowledged first and lost in a crash before the store would never come back, while one
 * not yet acknowledged is redelivered by Slack, and the store's event id dedupes the second delivery.
 * Interactions are not held: they are acknowledged first, always.
 */
export class EventAckGate {
  private readonly held = new Map<string, { send: () => void; timer: NodeJS.Timeout }>();
  /** Events released before their acknowledgement was even asked for (the listener ran first). */
  private readonly released = new Set<string>();

  constructor(private readonly maxHoldMs = MAX_ACK_HOLD_MS) {}

  /** Sends the acknowledgement once the event is released, or after the longest hold, whichever comes first. */
  hold(eventId: string, send: () => void): void {
    if (this.released.delete(eventId)) {
      send();
      return;
    }
    const timer = setTimeout(() => this.release(eventId), this.maxHoldMs);
    this.held.set(eventId, { send, timer });
  }

  /** Parley is done with the event (stored, ignored or failed): its acknowledgement may go. */
  release(eventId: string): void {
    const entry = this.held.get(eventId);
    if (!entry) {
      this.released.add(eventId);
      // Forget it if its acknowledgement is never asked for (an event Bolt did not route here).
      setTimeout(() => this.released.delete(eventId), this.maxHoldMs).unref();
      return;
    }
    this.held.delete(eventId);
    clearTimeout(entry.timer);
    entry.send();
  }

  /** Sends every held acknowledgement now (shutdown). */
  releaseAll(): void {
    for (const eventId of [...this.held.keys()]) this.release(eventId);
  }
}

/** The event id of an Events API envelope carrying a message or a mention from a person, else undefined. */
export function heldEventId(body: unknown): string | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const envelope = body as { type?: unknown; event_id?: unknown; event?: { type?: unknown; bot_id?: unknown } };
  if (envelope.type !== "event_callback" || typeof envelope.event_id !== "string") return undefined;
  const type = envelope.event?.type;
  // Bolt drops the bot's own messages before any listener runs: holding those would only delay them.
  if ((type !== "message" && type !== "app_mention") || envelope.event?.bot_id !== undefined) return undefined;
  return envelope.event_id;
}
