import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { type Loopback, listenLoopback } from "./loopback.js";

/** A request as the proxy saw it on its way to a fake platform API. */
export interface ProxiedRequest {
  method: string;
  /** The path and query, as sent. */
  path: string;
  /** The raw body, to tell one post from another (a retry sends the same body again). */
  body: string;
  at: number;
  /** The status the client got. */
  status: number;
  /** True when the proxy answered in place of the platform (a fault), whether or not it forwarded first. */
  faulted: boolean;
}

/**
 * What to answer instead of the platform. `afterForwarding`: the platform received the request and acted on it, and
 * its answer was lost on the way back (a 5xx from a gateway in front of it); otherwise the platform never saw it.
 */
export interface Fault {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  afterForwarding?: boolean;
}

/** Decides, per request, whether to answer with a fault; `seen` counts earlier requests with the same method, path and body. */
export type FaultPlan = (request: { method: string; path: string; body: string; seen: number }) => Fault | undefined;

/**
 * An HTTP proxy in front of a fake platform API that serves rate limits (429) and server errors (5xx) where a plan
 * says, and records every request with its time, so a test can check a client waited as told and never posted twice.
 */
export class FaultProxy {
  readonly requests: ProxiedRequest[] = [];
  private readonly seen = new Map<string, number>();
  private loopback: Loopback | undefined;

  constructor(
    private readonly target: string,
    private readonly plan: FaultPlan,
  ) {}

  /** `http://127.0.0.1:<port>`: the target's paths are served under it as they are. */
  get url(): string {
    return this.loopback?.url ?? "";
  }

  async start(): Promise<this> {
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        void this.handle(request, Buffer.concat(chunks), response).catch(() => {
          if (!response.headersSent) response.writeHead(502).end();
        });
      });
    });
    this.loopback = await listenLoopback(server);
    return this;
  }

  async close(): Promise<void> {
    await this.loopback?.close();
  }

  /** The requests that got a fault with this status. */
  faults(status: number): ProxiedRequest[] {
    return this.requests.filter((request) => request.faulted && request.status === status);
  }

  private async handle(request: IncomingMessage, raw: Buffer, response: ServerResponse): Promise<void> {
    const method = request.method ?? "GET";
    const path = request.url ?? "/";
    const body = raw.toString("utf8");
    const key = `${method} ${path}\n${body}`;
    const seen = this.seen.get(key) ?? 0;
    this.seen.set(key, seen + 1);
    const fault = this.plan({ method, path, body, seen });
    const record = (status: number, faulted: boolean) => this.requests.push({ method, path, body, at: Date.now(), status, faulted });
    if (fault && !fault.afterForwarding) {
      record(fault.status, true);
      response.writeHead(fault.status, fault.headers ?? {}).end(fault.body ?? "");
      return;
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === "string" && !["host", "connection", "content-length", "transfer-encoding"].includes(name)) headers[name] = value;
    }
    const answer = await fetch(`${this.target}${path}`, { method, headers, ...(raw.length > 0 ? { body: new Uint8Array(raw) } : {}) });
    const answered = Buffer.from(await answer.arrayBuffer());
    if (fault) {
      record(fault.status, true);
      response.writeHead(fault.status, fault.headers ?? {}).end(fault.body ?? "");
      return;
    }
    record(answer.status, false);
    const out: Record<string, string> = {};
    answer.headers.forEach((value, name) => {
      if (!["content-length", "content-encoding", "transfer-encoding", "connection", "keep-alive"].includes(name)) out[name] = value;
    });
    response.writeHead(answer.status, out).end(answered);
  }
}
