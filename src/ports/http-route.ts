import type { IncomingMessage, ServerResponse } from "node:http";

/** A GET route one adapter serves on an HTTP listener another owns (health checks on Slack's listener). */
export interface HttpRoute {
  path: string;
  handler: (request: IncomingMessage, response: ServerResponse) => void;
}
