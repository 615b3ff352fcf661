import type { Server } from "node:http";
import { type WebSocket, WebSocketServer } from "ws";

type Json = Record<string, unknown>;
interface Dispatch {
  op: 0;
  t: string;
  s: number;
  d: unknown;
}

/**
 * A fake Discord gateway speaking the JSON protocol discord.js uses without zlib-sync:
 * HELLO, IDENTIFY → READY + GUILD_CREATE, heartbeats, dispatches, and RESUME with replay.
 */
export class FakeDiscordGateway {
  readonly identifies: Array<{ intents: number }> = [];
  readonly resumes: Array<{ sessionId: string; seq: number }> = [];
  heartbeats = 0;
  /** Intents the application may not use (not enabled in the developer portal): an IDENTIFY asking for one is closed with 4014. */
  disallowedIntents = 0;
  /** Events sent again on a RESUME. */
  replayed = 0;
  private readonly server: WebSocketServer;
  private socket: WebSocket | undefined;
  private sequence = 0;
  private readonly log: Dispatch[] = [];
  private replayOnResume: (event: { t: string; d: unknown }) => boolean = () => false;
  private resumed: (() => void) | undefined;
  private sessionId = "";

  constructor(
    httpServer: Server,
    private readonly url: () => string,
    private readonly ready: () => { user: Json; guilds: Json[] },
    private readonly heartbeatIntervalMs = 45_000,
  ) {
    this.server = new WebSocketServer({ noServer: true });
    httpServer.on("upgrade", (request, socket, head) => {
      if (!request.url?.startsWith("/gateway")) return void socket.destroy();
      this.server.handleUpgrade(request, socket, head, (client) => this.accept(client));
    });
  }

  /** The intents of the newest IDENTIFY. */
  get intents(): number {
    return this.identifies.at(-1)?.intents ?? 0;
  }

  get connected(): boolean {
    return this.socket !== undefined;
  }

  dispatch(t: string, d: unknown): void {
    const payload: Dispatch = { op: 0, t, s: ++this.sequence, d };
    this.log.push(payload);
    this.socket?.send(JSON.stringify(payload));
  }

  /** Asks the client to reconnect (op 7); on its RESUME the chosen past events are sent again, as Discord may. */
  async reconnectAndReplay(which: (event: { t: string; d: unknown }) => boolean): Promise<void> {
    this.replayOnResume = which;
    const done = new Promise<void>((resolve) => {
      this.resumed = resolve;
    });
    this.socket?.send(JSON.stringify({ op: 7, d: null }));
    await done;
  }

  /** Sends chosen past events again on the current connection: a duplicate delivery, as after a reconnect. */
  redeliver(which: (event: { t: string; d: unknown }) => boolean): number {
    const events = this.log.filter((event) => event.t !== "READY" && which(event));
    for (const event of events) this.socket?.send(JSON.stringify({ ...event, s: ++this.sequence }));
    this.replayed += events.length;
    return events.length;
  }

  async close(): Promise<void> {
    for (const client of this.server.clients) client.terminate();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: WebSocket): void {
    this.socket = client;
    client.send(JSON.stringify({ op: 10, d: { heartbeat_interval: this.heartbeatIntervalMs } }));
    client.on("message", (raw) => this.receive(client, JSON.parse(String(raw)) as { op: number; d: Json }));
    client.on("close", () => {
      if (this.socket === client) this.socket = undefined;
    });
  }

  private receive(client: WebSocket, payload: { op: number; d: Json }): void {
    switch (payload.op) {
      case 1:
        this.heartbeats++;
        client.send(JSON.stringify({ op: 11 }));
        return;
      case 2: {
        this.identifies.push({ intents: Number(payload.d.intents) });
        if (Number(payload.d.intents) & this.disallowedIntents) return void client.close(4014, "Disallowed intent(s).");
        this.sessionId = `session-${this.identifies.length}`;
        const { user, guilds } = this.ready();
        this.dispatch("READY", {
          v: 10,
          user,
          guilds: guilds.map((guild) => ({ id: guild.id, unavailable: true })),
          session_id: this.sessionId,
          resume_gateway_url: this.url(),
          shard: [0, 1],
          application: { id: user.id, flags: 0 },
          private_channels: [],
        });
        for (const guild of guilds) this.dispatch("GUILD_CREATE", guild);
        return;
      }
      case 6: {
        this.resumes.push({ sessionId: String(payload.d.session_id), seq: Number(payload.d.seq) });
        const replay = this.log.filter((event) => event.t !== "READY" && this.replayOnResume(event));
        for (const event of replay) client.send(JSON.stringify(event));
        this.replayed += replay.length;
        client.send(JSON.stringify({ op: 0, t: "RESUMED", s: ++this.sequence, d: {} }));
        this.resumed?.();
        this.resumed = undefined;
        return;
      }
      default:
        return;
    }
  }
}
