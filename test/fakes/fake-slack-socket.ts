import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";

/**
 * A Socket Mode server: `apps.connections.open` on the fake API hands out its ws:// URL; on connect it says
 * `hello`, then pushes envelopes and resolves each with the client's ack.
 */
export class FakeSlackSocket {
  private server: WebSocketServer | undefined;
  private client: WebSocket | undefined;
  private readonly waitingAcks = new Map<string, (ack: Record<string, unknown>) => void>();
  private connected: Promise<void> | undefined;
  url = "";

  async start(): Promise<this> {
    this.server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await new Promise<void>((resolve) => this.server!.once("listening", () => resolve()));
    this.url = `ws://127.0.0.1:${(this.server.address() as AddressInfo).port}/link`;
    this.connected = new Promise<void>((resolve) => {
      this.server!.on("connection", (socket) => {
        this.client = socket;
        socket.on("message", (data) => {
          const ack = JSON.parse(String(data)) as Record<string, unknown>;
          const id = typeof ack.envelope_id === "string" ? ack.envelope_id : "";
          this.waitingAcks.get(id)?.(ack);
          this.waitingAcks.delete(id);
        });
        socket.send(
          JSON.stringify({ type: "hello", num_connections: 1, debug_info: { host: "fake" }, connection_info: { app_id: "A_PARLEY" } }),
        );
        resolve();
      });
    });
    return this;
  }

  waitForConnection(): Promise<void> {
    return this.connected ?? Promise.reject(new Error("socket server not started"));
  }

  /** Sends one envelope and resolves with the ack the app sent back for it. */
  send(type: "events_api" | "interactive" | "slash_commands", payload: Record<string, unknown>): Promise<Record<string, unknown>> {
    const envelopeId = randomUUID();
    const acked = new Promise<Record<string, unknown>>((resolve) => this.waitingAcks.set(envelopeId, resolve));
    this.client?.send(
      JSON.stringify({
        envelope_id: envelopeId,
        type,
        payload,
        accepts_response_payload: type !== "events_api",
        retry_attempt: 0,
        retry_reason: "",
      }),
    );
    return acked;
  }

  async close(): Promise<void> {
    for (const socket of this.server?.clients ?? []) socket.terminate();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
