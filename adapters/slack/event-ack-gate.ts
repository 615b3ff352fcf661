import type { Logger } from "../../src/ports/logger.js";
import { errorCode } from "./actor-directory.js";

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

/** What the Socket Mode client emits as "slack_event": an envelope and the function that acknowledges it. */
interface SocketEvent {
  body?: unknown;
  ack: (response?: unknown) => Promise<void>;
}

/**
 * Socket Mode: Bolt's receiver acknowledges an event's envelope before its listener runs, with the `ack` the client
 * hands it in its "slack_event" emission. That ack is swapped, as the client emits it, for one the gate holds until
 * the event is stored, for a message or a mention.
 */
export function holdSocketAcks(socket: { emit: (name: string, ...args: unknown[]) => boolean }, gate: EventAckGate, logger: Logger): void {
  const emit = socket.emit.bind(socket);
  socket.emit = (name: string, ...args: unknown[]) => {
    if (name === "slack_event") args[0] = held(args[0] as SocketEvent);
    return emit(name, ...args);
  };
  const held = (event: SocketEvent): SocketEvent => {
    const eventId = heldEventId(event.body);
    if (!eventId) return event;
    const send = (response?: unknown) => () =>
      void event.ack(response).catch((error: unknown) => logger.warn({ error: errorCode(error) }, "slack-socket-ack failed"));
    return { ...event, ack: async (response?: unknown) => gate.hold(eventId, send(response)) };
  };
}
