import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * A route one adapter serves on an HTTP listener another may own (health and the API on Slack's listener). The path
 * may hold `:name` segments; the handler reads the request itself, body included.
 */
export interface HttpRoute {
  path: string;
  /** GET when absent. */
  methods?: readonly string[];
  handler: (request: IncomingMessage, response: ServerResponse) => void;
}

/** Whether a request path fits a route path, a `:name` segment matching any one non-empty segment (not decoded). */
export function pathMatches(pattern: string, path: string): boolean {
  const want = pattern.split("/");
  const got = path.split("/");
  return (
    want.length === got.length && want.every((segment, index) => (segment.startsWith(":") ? got[index] !== "" : segment === got[index]))
  );
}

/** The route whose path and method fit a request (the path read as sent, not decoded). */
export function findRoute(routes: readonly HttpRoute[], method: string, path: string): HttpRoute | undefined {
  return routes.find((route) => pathMatches(route.path, path) && (route.methods ?? ["GET"]).includes(method));
}

/** A request no route takes, answered as JSON: 405 with the methods the path takes, or 404. */
export function routeMiss(
  routes: readonly HttpRoute[],
  method: string,
  path: string,
): { status: number; headers: Record<string, string>; body: string } {
  const methods = routes.filter((route) => pathMatches(route.path, path)).flatMap((route) => route.methods ?? ["GET"]);
  const json = { "content-type": "application/json" };
  if (methods.length === 0) return { status: 404, headers: json, body: JSON.stringify({ error: `ERROR: no route ${path.slice(0, 100)}` }) };
  const allow = methods.join(", ");
  return {
    status: 405,
    headers: { ...json, allow },
    body: JSON.stringify({ error: `ERROR: ${path.slice(0, 100)} takes ${allow}, not ${method.slice(0, 10)}` }),
  };
}
