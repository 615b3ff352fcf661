import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { findRoute, type HttpRoute, routeMiss } from "../../src/ports/http-route.js";

export interface HttpServer {
  port: number;
  close(): Promise<void>;
}

/** Routes a request: 404 for an unknown path, 405 (with Allow) for a known path and another method. */
export function routeRequest(routes: readonly HttpRoute[], request: IncomingMessage, response: ServerResponse): void {
  const path = (request.url ?? "").split("?")[0] ?? "";
  const route = findRoute(routes, request.method ?? "", path);
  if (route) {
    route.handler(request, response);
    return;
  }
  const miss = routeMiss(routes, request.method ?? "", path);
  response.writeHead(miss.status, miss.headers).end(miss.body);
}

/** The listener for Socket Mode and Discord, which need no HTTP of their own: health, and the API when served. */
export async function startHttpServer(routes: readonly HttpRoute[], port: number, host: string): Promise<HttpServer> {
  const server = createServer((request, response) => routeRequest(routes, request, response));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        // Long-polls would hold close() for up to a minute: they are cut, and the caller asks again.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
