import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { type Loopback, listenLoopback } from "../support/loopback.js";

/** One request as the proxy routed it. */
export interface RoutedRequest {
  at: number;
  /** Index of the bot it went to. */
  target: number;
  method: string;
  path: string;
  status?: number | undefined;
}

/**
 * A load balancer on loopback: each incoming request goes to the next bot's port in turn, method, path, headers
 * and body untouched (so Slack's signatures still verify and API tokens still authenticate). `sendNextTo(i)` makes
 * the next request go to bot `i`; the rotation carries on from there. Long requests (API long-polls) are never cut.
 */
export class RoundRobinProxy {
  private loopback: Loopback | undefined;
  private next = 0;
  readonly routed: RoutedRequest[] = [];
  url = "";

  constructor(private readonly ports: () => readonly number[]) {}

  /** The next request goes to bot `index`, the one after to `index + 1`, and so on. */
  sendNextTo(index: number): void {
    this.next = index;
  }

  async start(): Promise<this> {
    // The target is chosen when the request arrives, before its body: two requests sent at once go to two bots.
    const server = createServer((request, response) => this.forward(request, response));
    this.loopback = await listenLoopback(server);
    this.url = this.loopback.url;
    return this;
  }

  async close(): Promise<void> {
    await this.loopback?.close();
  }

  private forward(request: IncomingMessage, response: ServerResponse): void {
    const ports = this.ports();
    const target = this.next % ports.length;
    this.next = target + 1;
    const entry: RoutedRequest = { at: Date.now(), target, method: request.method ?? "GET", path: request.url ?? "/" };
    this.routed.push(entry);
    const upstream = httpRequest(
      {
        host: "127.0.0.1",
        port: ports[target],
        method: request.method,
        path: request.url,
        headers: request.headers,
        // No pooled sockets: a bot killed between tests must not leave one behind.
        agent: false,
      },
      (answer) => {
        entry.status = answer.statusCode;
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.on("error", () => {
      if (!response.headersSent) response.writeHead(502, { "content-type": "text/plain" }).end("bad gateway");
      else response.destroy();
    });
    // The caller going away (a long-poll given up) ends the upstream request too.
    response.on("close", () => {
      if (!response.writableFinished) upstream.destroy();
    });
    request.pipe(upstream);
  }
}
