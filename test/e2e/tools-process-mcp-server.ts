/**
 * The stdio MCP server of tools-process.test.ts, on the official SDK: one destructive tool, `drop_table`, and a
 * journal of what the bot did with it. Start it with `process.execPath --import <tsx loader URL> <this file>`.
 *
 * Environment (from the `env` of its mcp.json entry):
 * - `TOOLS_RECORD_FILE`: each event is appended as one JSON line: `{ "event": "listed", "tools": [...] }` just
 *   before a tools/list answer leaves, `{ "event": "call", "tool", "arguments" }` when a tool runs.
 * - `TOOLS_LIST_DELAY_MS`: holds each tools/list answer this long, so a bot that calls itself ready before its
 *   tools are listed has a window to be caught in.
 */
import { appendFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { isJSONRPCResultResponse, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

const RECORD_FILE = process.env.TOOLS_RECORD_FILE;
const LIST_DELAY_MS = Number(process.env.TOOLS_LIST_DELAY_MS ?? 0);

/** One line of the record file. */
export type ToolsServerEvent = { event: "listed"; tools: string[] } | { event: "call"; tool: string; arguments: Record<string, unknown> };

function record(event: ToolsServerEvent): void {
  if (RECORD_FILE) appendFileSync(RECORD_FILE, `${JSON.stringify(event)}\n`);
}

const server = new McpServer({ name: "ops-test", version: "1.0.0" });

server.registerTool(
  "drop_table",
  {
    description: "Drops a table from the production database.",
    inputSchema: { table: z.string(), keep_backup: z.boolean(), columns: z.array(z.string()).optional() },
    annotations: { destructiveHint: true },
  },
  async (input) => {
    record({ event: "call", tool: "drop_table", arguments: input });
    return { content: [{ type: "text", text: `dropped ${input.table}${input.keep_backup ? " (backup kept)" : ""}` }] };
  },
);

const transport = new StdioServerTransport();
const send = transport.send.bind(transport);
// The record says "listed" only once the list is on its way, so it cannot run ahead of what the bot knows.
transport.send = async (message: JSONRPCMessage) => {
  const tools = isJSONRPCResultResponse(message) ? message.result.tools : undefined;
  if (Array.isArray(tools)) {
    await new Promise((resolve) => setTimeout(resolve, LIST_DELAY_MS));
    record({ event: "listed", tools: tools.map((tool: { name: string }) => tool.name) });
  }
  return send(message);
};
await server.connect(transport);
process.stdin.on("end", () => process.exit(0));
