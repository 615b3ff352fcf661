import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A Web API call as the proxy sees it on its way to the fake Slack API. */
export interface ProxiedCall {
  method: string;
  params: Record<string, unknown>;
}

/**
 * A trap on the next matching call: `hold-before` holds the request before Slack sees it (a bot killed in the
 * hold never reached Slack), `hold-after` lets Slack answer first and holds the answer (Slack posted, the bot
 * never learned the ts).
 */
export interface SlackTrap {
  matches: (call: ProxiedCall) => boolean;
  mode: "hold-before" | "hold-after";
  holdMs: number;
  onHit: (call: ProxiedCall) => void;
}

/**
 * Sits between the bot and FakeSlackApi (SLACK_API_URL points here) so a test can hold one call in flight
 * and kill the bot while it waits. Everything else passes straight through.
 */
export class SlackChaosProxy {
  private server: Server | undefined;
  private trap: SlackTrap | undefined;
  url = "";
  /** Requests a `hold-before` trap dropped because the bot died while they were held. */
  dropped = 0;
  /** Every call, when it arrived and what became of it (for reading a kept run). */
  readonly log: Array<{ at: number; method: string; askId?: string; ts?: string; text?: string; held?: string; outcome?: string }> = [];

  constructor(private readonly target: string) {}

  get apiUrl(): string {
    return `${this.url}/api/`;
  }

  arm(trap: SlackTrap): void {
    this.trap = trap;
  }

  disarm(): void {
    this.trap = undefined;
  }

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        void this.handle(request, Buffer.concat(chunks), response).catch(() => {
          if (!response.headersSent) response.writeHead(502).end();
        });
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  private async handle(request: IncomingMessage, body: Buffer, response: ServerResponse): Promise<void> {
    const path = request.url ?? "/";
    const call: ProxiedCall = { method: path.replace(/^\/api\//, "").split("?")[0] ?? "", params: decode(request, body) };
    const trap = this.trap?.matches(call) ? this.trap : undefined;
    if (trap) {
      this.trap = undefined;
      trap.onHit(call);
    }
    const entry: (typeof this.log)[number] = { at: Date.now(), method: call.method };
    const askId = cardAskId(call.params.blocks);
    if (askId) entry.askId = askId;
    if (typeof call.params.ts === "string") entry.ts = call.params.ts;
    if (typeof call.params.text === "string") entry.text = call.params.text.slice(0, 120);
    if (trap) entry.held = trap.mode;
    this.log.push(entry);
    let closed = false;
    response.on("close", () => {
      closed = true;
    });
    if (trap?.mode === "hold-before") {
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
    const answer = await fetch(`${this.target}${path}`, {
      method: request.method ?? "POST",
      headers,
      body: body.length > 0 ? body.toString("utf8") : null,
    });
    const text = await answer.text();
    if (trap?.mode === "hold-after") await sleep(trap.holdMs);
    entry.outcome = closed ? `answered to a dead bot: ${text.slice(0, 80)}` : text.slice(0, 80);
    if (closed) return;
    const out: Record<string, string> = { "content-type": answer.headers.get("content-type") ?? "application/json" };
    const retryAfter = answer.headers.get("retry-after");
    if (retryAfter) out["retry-after"] = retryAfter;
    response.writeHead(answer.status, out).end(text);
  }
}

function decode(request: IncomingMessage, body: Buffer): Record<string, unknown> {
  const raw = body.toString("utf8");
  try {
    if ((request.headers["content-type"] ?? "").includes("application/json")) return JSON.parse(raw || "{}") as Record<string, unknown>;
    const params: Record<string, unknown> = Object.fromEntries(new URLSearchParams(raw));
    for (const key of ["blocks", "view"]) {
      if (typeof params[key] === "string") params[key] = JSON.parse(params[key] as string);
    }
    return params;
  } catch {
    return {};
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The action ids of a message's `actions` blocks. */
export function actionIdsOf(blocks: unknown): string[] {
  if (!Array.isArray(blocks)) return [];
  return blocks.flatMap((block: { type?: string; elements?: Array<{ action_id?: string }> }) =>
    block?.type === "actions" ? (block.elements ?? []).map((element) => element.action_id ?? "") : [],
  );
}

/** The ask id a card's controls carry (`ask:<askId>:…`), if the message is a card. */
export function cardAskId(blocks: unknown): string | undefined {
  const id = actionIdsOf(blocks).find((entry) => entry.startsWith("ask:"));
  return id?.split(":")[1];
}
