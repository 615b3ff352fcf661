import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";

/** Slack expects an envelope's ack within 3 s; after that it counts the delivery as failed. */
const ENVELOPE_ACK_TIMEOUT_MS = 3000;
/** Slack gives up on an event after 3 retries. */
const MAX_EVENT_RETRIES = 3;

type EnvelopeType = "events_api" | "interactive" | "slash_commands";

/** What became of one envelope sent through the socket: acknowledged (with the ack's payload) or given up. */
export type DeliveryOutcome = { acked: true; payload: unknown } | { acked: false };

interface Delivery {
  type: EnvelopeType;
  payload: Record<string, unknown>;
  /** Events are redelivered when unacknowledged; interactions and commands are not (the person sees an error). */
  redeliver: boolean;
  attempt: number;
  finish: (outcome: DeliveryOutcome) => void;
  socket?: WebSocket;
  timer?: NodeJS.Timeout;
}

interface SocketCounts {
  connections: number;
  envelopes: number;
  acks: number;
  /** Events sent again (a new envelope, `retry_attempt` + 1) after their connection closed or their ack timed out. */
  redeliveries: number;
  /** Events Slack stopped retrying; taps and commands sent with no app connected, or whose connection closed before the ack. */
  abandoned: number;
}

/**
 * Slack's side of Socket Mode as far as delivery goes: `apps.connections.open` hands out `url`; each connection
 * gets `hello`; each event goes to the newest connection as an envelope and is sent again, as a new envelope with
 * `retry_attempt` and `retry_reason`, when that connection closes or the ack does not come within 3 s. An event
 * sent while no app is connected waits for the next connection, as Slack queues it for a restarting app.
 */
export class RedeliveringSlackSocket {
  private server: WebSocketServer | undefined;
  private current: WebSocket | undefined;
  private readonly waiting: Delivery[] = [];
  private readonly outstanding = new Map<string, Delivery>();
  readonly counts: SocketCounts = { connections: 0, envelopes: 0, acks: 0, redeliveries: 0, abandoned: 0 };
  /** Called with each envelope as it is sent (a test kills the app before it can ack). */
  onSend: ((type: EnvelopeType, attempt: number) => void) | undefined;
  /** Called after each ack (a test kills the app right after it). */
  onAck: ((type: EnvelopeType) => void) | undefined;
  url = "";

  /** True while an app is connected (it has been sent `hello`). */
  get connected(): boolean {
    return this.current !== undefined;
  }

  async start(): Promise<this> {
    const server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    this.server = server;
    await new Promise<void>((resolve) => server.once("listening", () => resolve()));
    this.url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/link`;
    server.on("connection", (socket) => this.accept(socket));
    return this;
  }

  /** Sends one envelope; resolves once it is acknowledged, or when Slack would give up on it. */
  deliver(type: EnvelopeType, payload: Record<string, unknown>, firstAttempt = 0): Promise<DeliveryOutcome> {
    return new Promise((finish) => {
      const delivery: Delivery = { type, payload, redeliver: type === "events_api", attempt: firstAttempt, finish };
      this.dispatch(delivery);
    });
  }

  async close(): Promise<void> {
    for (const socket of this.server?.clients ?? []) socket.terminate();
    for (const delivery of [...this.outstanding.values(), ...this.waiting]) {
      clearTimeout(delivery.timer);
      delivery.finish({ acked: false });
    }
    this.outstanding.clear();
    this.waiting.length = 0;
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  private accept(socket: WebSocket): void {
    this.counts.connections++;
    socket.on("message", (data) => this.acknowledge(String(data)));
    socket.on("close", () => this.dropped(socket));
    socket.send(
      JSON.stringify({ type: "hello", num_connections: 1, debug_info: { host: "chaos" }, connection_info: { app_id: "A_PARLEY" } }),
    );
    this.current = socket;
    for (const delivery of this.waiting.splice(0)) this.dispatch(delivery);
  }

  private dispatch(delivery: Delivery): void {
    const socket = this.current;
    if (!socket || socket.readyState !== socket.OPEN) {
      if (delivery.redeliver) this.waiting.push(delivery);
      else this.abandon(delivery);
      return;
    }
    const envelopeId = randomUUID();
    delivery.socket = socket;
    delivery.timer = setTimeout(() => this.failed(envelopeId), ENVELOPE_ACK_TIMEOUT_MS);
    this.outstanding.set(envelopeId, delivery);
    this.counts.envelopes++;
    socket.send(
      JSON.stringify({
        envelope_id: envelopeId,
        type: delivery.type,
        payload: delivery.payload,
        accepts_response_payload: delivery.type !== "events_api",
        retry_attempt: delivery.attempt,
        retry_reason: delivery.attempt > 0 ? "timeout" : "",
      }),
    );
    this.onSend?.(delivery.type, delivery.attempt);
  }

  private acknowledge(text: string): void {
    let ack: { envelope_id?: unknown; payload?: unknown };
    try {
      ack = JSON.parse(text) as typeof ack;
    } catch {
      return;
    }
    const envelopeId = typeof ack.envelope_id === "string" ? ack.envelope_id : "";
    const delivery = this.outstanding.get(envelopeId);
    // An ack for an envelope already given up on (timed out, redelivered) counts for nothing, as on Slack.
    if (!delivery) return;
    this.outstanding.delete(envelopeId);
    clearTimeout(delivery.timer);
    this.counts.acks++;
    delivery.finish({ acked: true, payload: ack.payload });
    this.onAck?.(delivery.type);
  }

  /** The app's connection closed (a kill): every envelope it had not acknowledged fails. */
  private dropped(socket: WebSocket): void {
    if (this.current === socket) this.current = undefined;
    for (const [envelopeId, delivery] of this.outstanding) if (delivery.socket === socket) this.failed(envelopeId);
  }

  private failed(envelopeId: string): void {
    const delivery = this.outstanding.get(envelopeId);
    if (!delivery) return;
    this.outstanding.delete(envelopeId);
    clearTimeout(delivery.timer);
    if (!delivery.redeliver || delivery.attempt >= MAX_EVENT_RETRIES) {
      this.abandon(delivery);
      return;
    }
    delivery.attempt++;
    this.counts.redeliveries++;
    this.dispatch(delivery);
  }

  private abandon(delivery: Delivery): void {
    this.counts.abandoned++;
    delivery.finish({ acked: false });
  }
}
