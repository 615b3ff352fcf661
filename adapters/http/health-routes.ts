import type { IncomingMessage, ServerResponse } from "node:http";
import type { HealthProbe } from "../../src/ports/health.js";
import type { HttpRoute } from "../../src/ports/http-route.js";

export const HEALTH_PATHS = { live: "/healthz", ready: "/readyz" } as const;

/** Answers GET /healthz or /readyz from the probe: 200 with the checks when ok, 503 with them when not. */
export async function answerHealth(probe: HealthProbe, which: keyof typeof HEALTH_PATHS, response: ServerResponse): Promise<void> {
  const report = await (which === "live" ? probe.live() : probe.ready());
  response.writeHead(report.ok ? 200 : 503, { "content-type": "application/json", "cache-control": "no-store" });
  response.end(JSON.stringify(report));
}

/** /healthz and /readyz as routes for a listener another adapter owns (Slack's, in HTTP mode). */
export function healthRoutes(probe: HealthProbe): HttpRoute[] {
  const handler = (which: keyof typeof HEALTH_PATHS) => (_request: IncomingMessage, response: ServerResponse) =>
    void answerHealth(probe, which, response).catch(() => response.writeHead(500).end());
  return [
    { path: HEALTH_PATHS.live, handler: handler("live") },
    { path: HEALTH_PATHS.ready, handler: handler("ready") },
  ];
}
