import type { IncomingMessage, ServerResponse } from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, type CallToolResult, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { ASK_USER_INPUT_SCHEMA } from "../../src/ask/spec.js";
import type { AskApi, AskView } from "../../src/ports/ask-api.js";
import type { HttpRoute } from "../../src/ports/http-route.js";
import { type ApiRouteOptions, authorize, readJson } from "./api-routes.js";
import { sendJson } from "./http-io.js";

/** `ask_user` waits this long by default, and at most this long (DESIGN §12). */
const DEFAULT_WAIT_S = 300;
const MAX_WAIT_S = 3600;
/** How often a waiting call tells a client that gave a progress token that it is still waiting. */
export const PROGRESS_INTERVAL_MS = 20_000;

export interface McpEndpointOptions extends ApiRouteOptions {
  progressIntervalMs?: number;
}

const place = {
  channel: { type: "string", description: 'Where to post the card: "slack:<channel id>" or "discord:<channel id>".' },
  thread: { type: "string", description: "A thread to post in (a Slack ts, a Discord thread id); a new thread when absent." },
  answerers: { type: "array", items: { type: "string" }, description: 'Who may answer, e.g. ["slack:U0ALICE"]; anyone when absent.' },
  wait_s: { type: "number", description: `Seconds to wait for the answer (default ${DEFAULT_WAIT_S}, at most ${MAX_WAIT_S}).` },
};

const TOOLS = [
  {
    name: "ask_user",
    description:
      "Ask people on Slack or Discord a question and wait for the answer. Returns the answer as JSON " +
      '({"ok":true,"value":…}, or cancelled/timeout); if wait_s passes first, {"ok":false,"pending":true,"ask_id":…}: ' +
      "the question stays open, read it later with get_ask_result.",
    inputSchema: {
      ...ASK_USER_INPUT_SCHEMA,
      properties: { ...ASK_USER_INPUT_SCHEMA.properties, ...place },
      required: ["question", "channel"],
    },
  },
  {
    name: "get_ask_result",
    description: "The answer to a question asked earlier, waiting up to wait_s for it; the pending object while it is open.",
    inputSchema: { type: "object", properties: { ask_id: { type: "string" }, wait_s: place.wait_s }, required: ["ask_id"] },
  },
  {
    name: "cancel_ask",
    description: "Cancels a question that is still open; its card shows it was cancelled.",
    inputSchema: { type: "object", properties: { ask_id: { type: "string" } }, required: ["ask_id"] },
  },
];

type Extra = { signal: AbortSignal; _meta?: { progressToken?: string | number }; sendNotification: (n: never) => Promise<void> };

function text(value: unknown, isError = false): CallToolResult {
  return { content: [{ type: "text", text: typeof value === "string" ? value : JSON.stringify(value) }], ...(isError ? { isError } : {}) };
}

function waitSeconds(value: unknown): number | string {
  if (value === undefined) return DEFAULT_WAIT_S;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value > MAX_WAIT_S)
    return `ERROR: wait_s must be a number of seconds from 0 to ${MAX_WAIT_S}`;
  return value;
}

/** What `ask_user` and `get_ask_result` return: the §2 result once the ask ended, else the pending object. */
function outcomeOf(view: AskView): CallToolResult {
  return view.status === "pending" ? text({ ok: false, pending: true, ask_id: view.id }) : text(view.result);
}

/** One MCP server per request (stateless Streamable HTTP): the tools act for the token that called. */
function toolServer(api: AskApi, token: string, progressIntervalMs: number, hangUp: AbortSignal): Server {
  const server = new Server({ name: "parley", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  const wait = async (askId: string, seconds: number, extra: Extra): Promise<AskView | undefined> => {
    const progressToken = extra._meta?.progressToken;
    let progress = 0;
    // A client with a progress token hears from us while we wait, so its own request timeout can be reset.
    const ticker =
      progressToken === undefined
        ? undefined
        : setInterval(() => {
            progress++;
            const notification = {
              method: "notifications/progress",
              params: { progressToken, progress, message: "waiting for an answer" },
            };
            extra.sendNotification(notification as never).catch(() => {});
          }, progressIntervalMs);
    try {
      return await api.get(token, askId, seconds * 1000, AbortSignal.any([extra.signal, hangUp]));
    } finally {
      clearInterval(ticker);
    }
  };
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    const name = request.params.name;
    if (name === "ask_user") {
      const { channel, thread, answerers, wait_s, ...ask } = args;
      const seconds = waitSeconds(wait_s);
      if (typeof seconds === "string") return text(seconds, true);
      const body = { channel, ...(thread !== undefined ? { thread } : {}), ...(answerers !== undefined ? { answerers } : {}), ask };
      const created = await api.create(token, body);
      if (created.kind === "invalid" || created.kind === "conflict") return text(created.error, true);
      const view = await wait(created.view.id, seconds, extra as Extra);
      return outcomeOf(view ?? created.view);
    }
    if (typeof args.ask_id !== "string") return text("ERROR: ask_id must be the id ask_user returned", true);
    if (name === "get_ask_result") {
      const seconds = waitSeconds(args.wait_s ?? 0);
      if (typeof seconds === "string") return text(seconds, true);
      const view = await wait(args.ask_id, seconds, extra as Extra);
      return view ? outcomeOf(view) : text(`ERROR: no ask ${args.ask_id} for this token`, true);
    }
    if (name === "cancel_ask") {
      const outcome = await api.cancel(token, args.ask_id);
      if (outcome.kind === "unknown") return text(`ERROR: no ask ${args.ask_id} for this token`, true);
      return text(outcome.view.result);
    }
    return text(`ERROR: no tool ${name}: use ask_user, get_ask_result or cancel_ask`, true);
  });
  return server;
}

/** The MCP server at `/mcp` (Streamable HTTP, stateless): `ask_user`, `get_ask_result`, `cancel_ask` for the token. */
export function mcpRoute(options: McpEndpointOptions): HttpRoute {
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const token = await authorize(options, request, response);
    if (token === undefined) return;
    if (request.method !== "POST") {
      // Stateless: no stream to resume and no session to end.
      return sendJson(response, 405, { error: "ERROR: /mcp takes POST only (stateless Streamable HTTP)" }, { allow: "POST" });
    }
    const parsed = await readJson(request, response);
    if (!parsed) return;
    const hangUp = new AbortController();
    const server = toolServer(options.api(), token, options.progressIntervalMs ?? PROGRESS_INTERVAL_MS, hangUp.signal);
    // No session id generator: stateless, a fresh transport for each request.
    const transport = new StreamableHTTPServerTransport({});
    // The client went away: its wait ends here, and the ask stays open to be read by id.
    response.once("close", () => {
      hangUp.abort();
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request, response, parsed.body);
  };
  return {
    path: "/mcp",
    methods: ["POST", "GET", "DELETE"],
    handler: (request, response) =>
      void handle(request, response).catch((error: unknown) => {
        options.logger.error({ err: error }, "mcp-request failed");
        sendJson(response, 500, { error: "internal error" });
      }),
  };
}
