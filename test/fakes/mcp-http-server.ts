import { createServer, type IncomingMessage, type Server } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";
import { listenLoopback } from "../support/loopback.js";

/** A running HTTP MCP server on 127.0.0.1: Streamable HTTP at `/mcp`, the legacy HTTP+SSE transport at `/sse`. */
export interface TestHttpMcpServer {
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  /** The `Authorization` header of every request, in order. */
  authorizations: Array<string | undefined>;
  close(): Promise<void>;
}

function createMcpServer(): McpServer {
  const server = new McpServer({ name: "parley-http-test", version: "1.0.0" });
  server.registerTool(
    "echo",
    { description: "Echoes its text.", inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } },
    async ({ text }) => ({ content: [{ type: "text", text: `echo: ${text}` }] }),
  );
  return server;
}

/**
 * Starts the server on a free port. With `requiredAuthorization`, a request without exactly that
 * `Authorization` header gets 401.
 */
export async function startTestHttpMcpServer(options: { requiredAuthorization?: string } = {}): Promise<TestHttpMcpServer> {
  const authorizations: Array<string | undefined> = [];
  const sseSessions = new Map<string, SSEServerTransport>();
  const allowed = (request: IncomingMessage) =>
    options.requiredAuthorization === undefined || request.headers.authorization === options.requiredAuthorization;

  const http: Server = createServer(async (request, response) => {
    authorizations.push(request.headers.authorization);
    if (!allowed(request)) {
      response.writeHead(401).end("unauthorized");
      return;
    }
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    if (url.pathname === "/mcp") {
      // Stateless: one server and transport per request, as the SDK's stateless example does.
      const transport = new StreamableHTTPServerTransport({});
      const server = createMcpServer();
      response.on("close", () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(request, response);
      return;
    }
    if (url.pathname === "/sse" && request.method === "GET") {
      const transport = new SSEServerTransport("/messages", response);
      sseSessions.set(transport.sessionId, transport);
      response.on("close", () => sseSessions.delete(transport.sessionId));
      await createMcpServer().connect(transport);
      return;
    }
    const session = sseSessions.get(url.searchParams.get("sessionId") ?? "");
    if (url.pathname === "/messages" && session) {
      await session.handlePostMessage(request, response);
      return;
    }
    response.writeHead(404).end();
  });
  const loopback = await listenLoopback(http);
  return { origin: loopback.url, authorizations, close: loopback.close };
}
