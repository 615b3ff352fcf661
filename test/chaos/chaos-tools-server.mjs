/**
 * The chaos suite's MCP server (stdio, official SDK), plain JavaScript so each of the 200 restarts starts it in
 * a blink. Two tools that take a while, so a kill can land mid-call, and that record every run to
 * `CHAOS_TOOL_RECORD` (one line when a call starts, one when it ends):
 * - `deploy` (destructive, not idempotent): `start deploy <target>` … `done deploy <target>`;
 * - `restart` (destructive, idempotent): `start restart <service>` … `done restart <service>`.
 */
import { appendFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const RECORD_FILE = process.env.CHAOS_TOOL_RECORD;
if (!RECORD_FILE) throw new Error("CHAOS_TOOL_RECORD is required");

/** 300–1,500 ms, the same for the same name, so a re-run takes as long as the first run. */
function durationOf(name) {
  let value = 7;
  for (const char of name) value = (value * 31 + char.charCodeAt(0)) % 1201;
  return 300 + value;
}

function register(server, tool, key, idempotent) {
  server.registerTool(
    tool,
    {
      description: `Chaos ${tool}: takes a moment and records each run.`,
      inputSchema: { [key]: z.string() },
      annotations: { destructiveHint: true, idempotentHint: idempotent },
    },
    async (input) => {
      const name = input[key];
      appendFileSync(RECORD_FILE, `start ${tool} ${name}\n`);
      await new Promise((resolve) => setTimeout(resolve, durationOf(name)));
      appendFileSync(RECORD_FILE, `done ${tool} ${name}\n`);
      return { content: [{ type: "text", text: `${tool} ${name}: done` }] };
    },
  );
}

const server = new McpServer({ name: "parley-chaos", version: "1.0.0" });
register(server, "deploy", "target", false);
register(server, "restart", "service", true);
await server.connect(new StdioServerTransport());
