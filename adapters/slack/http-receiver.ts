import { HTTPModuleFunctions, HTTPReceiver, HTTPReceiverDeferredRequestError } from "@slack/bolt";
import { findRoute, type HttpRoute, routeMiss } from "../../src/ports/http-route.js";
import type { createBoltLogger } from "./bolt-logger.js";
import type { EventAckGate } from "./event-ack-gate.js";
import { guardSlackRequests } from "./request-guard.js";
import { SLACK_MAX_BODY_BYTES } from "./slack-limits.js";

/** Events, interactivity and slash commands all arrive here, as Slack's app manifest says. */
export const SLACK_EVENTS_PATH = "/slack/events";

/**
 * Bolt's own HTTP receiver with a guard in front of its listener: a body larger than any Slack payload is
 * refused with 413 before it is verified or parsed (Bolt's default would buffer up to 4 MB), and a body that
 * is not a JSON object never reaches Bolt (see request-guard.ts).
 */
export function httpReceiver(
  signingSecret: string,
  logger: ReturnType<typeof createBoltLogger>,
  routes: HttpRoute[],
  gate: EventAckGate,
): HTTPReceiver {
  const receiver = new HTTPReceiver({
    signingSecret,
    logger,
    endpoints: [SLACK_EVENTS_PATH],
    bodyLimit: SLACK_MAX_BODY_BYTES,
    customRoutes: routes.map((route) => ({ path: route.path, method: [...(route.methods ?? ["GET"])], handler: route.handler })),
    // Bolt matches custom routes with path-to-regexp, which throws on a malformed %-escape in a `:param` segment
    // (GET /v1/asks/%zz) and Bolt answers that with an empty 500: the route is found here without decoding anything.
    // Unrouted requests get the same JSON 404/405 as on Parley's own listener.
    dispatchErrorHandler: (args) => {
      const unrouted = args.error instanceof URIError || args.error instanceof HTTPReceiverDeferredRequestError;
      if (!unrouted) return HTTPModuleFunctions.defaultDispatchErrorHandler(args);
      const method = args.request.method ?? "";
      const path = (args.request.url ?? "").split("?")[0] ?? "";
      const route = findRoute(routes, method, path);
      if (route) return route.handler(args.request, args.response);
      const miss = routeMiss(routes, method, path);
      args.response.writeHead(miss.status, miss.headers).end(miss.body);
    },
  });
  receiver.requestListener = guardSlackRequests(receiver.requestListener, {
    path: SLACK_EVENTS_PATH,
    limitBytes: SLACK_MAX_BODY_BYTES,
    signingSecret,
    gate,
  });
  return receiver;
}
