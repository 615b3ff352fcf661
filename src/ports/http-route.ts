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
