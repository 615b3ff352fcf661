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
