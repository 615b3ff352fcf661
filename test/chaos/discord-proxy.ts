import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { type Loopback, listenLoopback } from "../support/loopback.js";
import { sleep } from "./slack-proxy.js";

type Json = Record<string, unknown>;

/** A REST request as the proxy sees it on its way to the fake Discord API (`path` without `/api/v10`). */
export interface DiscordCall {
  verb: string;
  path: string;
  body: Json;
}

/** A request Discord answered, with its answer: what the fake did, whether or not the bot lived to read it. */
export interface AnsweredDiscordCall extends DiscordCall {
  /** When the request arrived. */
  at: number;
  status: number;
  result: unknown;
}

/**
 * A trap on the next matching request: `hold-before` holds it before Discord sees it (a bot killed in the hold
 * never reached Discord), `hold-after` lets Discord answer first and holds the answer (Discord acted, the bot
 * never learned it). `onHit` fires at the hold: on arrival for `hold-before`, once Discord answered for `hold-after`.
 */
export interface DiscordTrap {
  matches: (call: DiscordCall) => boolean;
  mode: "hold-before" | "hold-after";
  holdMs: number;
  onHit: (call: DiscordCall) => void;
}

/**
 * Sits between the bot and the fake Discord REST API (DISCORD_API_URL points here) so a test can hold one request
 * in flight and kill the bot while it waits. The gateway is not proxied: `GET /gateway/bot` names the fake's own.
 */
export class DiscordChaosProxy {
  private readonly server: Server;
  private loopback: Loopback | undefined;
  private trap: DiscordTrap | undefined;
  /** Requests a `hold-before` trap dropped because the bot died while they were held. */
  dropped = 0;
  /** Every request the fake Discord answered, in order. */
  readonly calls: AnsweredDiscordCall[] = [];
  /** Every request, when it arrived and what became of it (for reading a kept run). */
  readonly log: Array<{ at: number; verb: string; path: string; held?: string; outcome?: string }> = [];

  /** `target` is the fake's origin, `http://127.0.0.1:<port>`. */
  constructor(private readonly target: string) {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        void this.handle(request, Buffer.concat(chunks), response).catch(() => {
          if (!response.headersSent) response.writeHead(502).end();
        });
      });
    });
  }

  /** The REST base to give the bot as DISCORD_API_URL. */
  get apiUrl(): string {
    return `${this.loopback?.url ?? ""}/api`;
  }

  arm(trap: DiscordTrap): void {
    this.trap = trap;
  }

  disarm(): void {
    this.trap = undefined;
  }

  async start(): Promise<this> {
    this.loopback = await listenLoopback(this.server);
    return this;
  }

  async close(): Promise<void> {
    await this.loopback?.close();
  }

  private async handle(request: IncomingMessage, raw: Buffer, response: ServerResponse): Promise<void> {
    const url = request.url ?? "/";
    const call: DiscordCall = {
      verb: request.method ?? "GET",
      path: url.split("?")[0]?.replace(/^\/api\/v10/, "") ?? "",
      body: decode(raw),
    };
    const trap = this.trap?.matches(call) ? this.trap : undefined;
    if (trap) this.trap = undefined;
    const entry: (typeof this.log)[number] = { at: Date.now(), verb: call.verb, path: call.path, ...(trap ? { held: trap.mode } : {}) };
    this.log.push(entry);
    let closed = false;
    response.on("close", () => {
      closed = true;
    });
    if (trap?.mode === "hold-before") {
      trap.onHit(call);
      await sleep(trap.holdMs);
      if (closed || request.socket.destroyed) {
        this.dropped++;
        entry.outcome = "dropped";
        return;
      }
    }
    const headers: Record<string, string> = {};
    for (const name of ["content-type", "authorization"]) {
      const value = request.headers[name];
      if (typeof value === "string") headers[name] = value;
    }
    const answer = await fetch(`${this.target}${url}`, {
      method: call.verb,
      headers,
      body: raw.length > 0 ? new Uint8Array(raw) : null,
    });
    const text = await answer.text();
    this.calls.push({ ...call, at: entry.at, status: answer.status, result: parse(text) });
    if (trap?.mode === "hold-after") {
      trap.onHit(call);
      await sleep(trap.holdMs);
    }
    entry.outcome = `${closed ? "answered to a dead bot: " : ""}${answer.status}`;
    if (closed) return;
    const out: Record<string, string> = {};
    const contentType = answer.headers.get("content-type");
    if (contentType) out["content-type"] = contentType;
    response.writeHead(answer.status, out).end(text);
  }
}

function decode(raw: Buffer): Json {
  const parsed = parse(raw.toString("utf8"));
  return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Json) : {};
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text || "null");
  } catch {
    return undefined;
  }
}

/** Every custom_id in a Discord message's components (action rows and what they hold). */
export function customIdsOf(components: unknown): string[] {
  if (!Array.isArray(components)) return [];
  return components.flatMap((component: { custom_id?: unknown; components?: unknown }) => [
    ...(typeof component?.custom_id === "string" ? [component.custom_id] : []),
    ...customIdsOf(component?.components),
  ]);
}

/** The ask id a card's components carry (`ask:<askId>:…`), if the message is a card. */
export function discordCardAskId(components: unknown): string | undefined {
  return customIdsOf(components)
    .find((id) => id.startsWith("ask:"))
    ?.split(":")[1];
}
