/**
 * A small stdio MCP server for tests, on the official SDK. Start it with
 * `process.execPath --import tsx test/fakes/mcp-test-server.ts`.
 *
 * Environment:
 * - `MCP_TEST_RECORD_FILE`: a file each side effect appends one line to (`started <pid>`, `delete_record 7`,
 *   `slow cancelled`…), so tests can count executions across restarts; unset, nothing is recorded.
 * - `MCP_TEST_SERVER_NAME`: the name the server gives itself (default `parley-test`).
 * - `MCP_TEST_PRINT_VARIABLE`: the name of a variable the server prints to stderr with its value, at start.
 * - `MCP_TEST_CRASH_ON_START`: when `1`, the process exits at once, before speaking MCP (a server that never starts).
 */
import { appendFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";
import { TINY_PNG_BASE64 } from "./mcp-test-server-entry.js";

const RECORD_FILE = process.env.MCP_TEST_RECORD_FILE;
const SERVER_NAME = process.env.MCP_TEST_SERVER_NAME ?? "parley-test";

function record(line: string): void {
  if (RECORD_FILE) appendFileSync(RECORD_FILE, `${line}\n`);
}

function text(value: string) {
  return { content: [{ type: "text" as const, text: value }] };
}

function wait(milliseconds: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, milliseconds);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(new Error("cancelled"));
    });
  });
}

if (process.env.MCP_TEST_CRASH_ON_START === "1") {
  process.stderr.write("parley test server: asked to crash on start\n");
  process.exit(2);
}

const server = new McpServer({ name: SERVER_NAME, version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } });

server.registerTool(
  "lookup",
  { description: "Looks a key up.", inputSchema: { key: z.string() }, annotations: { readOnlyHint: true } },
  async ({ key }) => text(`value of ${key}`),
);

server.registerTool(
  "delete_record",
  { description: "Deletes a record.", inputSchema: { id: z.string() }, annotations: { destructiveHint: true } },
  async ({ id }) => {
    record(`delete_record ${id}`);
    return text(`deleted ${id}`);
  },
);

server.registerTool(
  "set_flag",
  {
    description: "Sets a flag.",
    inputSchema: { name: z.string(), value: z.boolean() },
    annotations: { idempotentHint: true, destructiveHint: false },
  },
  async ({ name, value }) => {
    record(`set_flag ${name}=${value}`);
    return text(`flag ${name} is ${value}`);
  },
);

server.registerTool(
  "confirm_with_form",
  { description: "Asks the people to confirm through a form, and returns what they answered." },
  async (extra) => {
    const result = await server.server.elicitInput(
      {
        message: "Confirm the deletion?",
        requestedSchema: {
          type: "object",
          properties: {
            confirm: { type: "boolean", title: "Confirm", description: "Really delete" },
            reason: { type: "string", description: "Why" },
            count: { type: "integer", title: "How many", minimum: 1, default: 1 },
            color: { type: "string", enum: ["red", "green"] },
          },
          required: ["confirm"],
        },
      },
      { relatedRequestId: extra.requestId },
    );
    record(`confirm_with_form ${result.action}`);
    return text(JSON.stringify({ action: result.action, content: result.content ?? null }));
  },
);

server.registerTool("picture", { description: "Returns a tiny picture." }, async () => ({
  content: [
    { type: "text", text: "a picture:" },
    { type: "image", data: TINY_PNG_BASE64, mimeType: "image/png" },
  ],
}));

server.registerTool(
  "slow",
  {
    description:
      "Works for a while, reporting progress every 100 ms unless silent (with `message` as the progress text when given); records whether it finished or was cancelled.",
    // `message` lets a test make the server say anything on the status message, pings included.
    inputSchema: { seconds: z.number(), silent: z.boolean().optional(), message: z.string().optional() },
  },
  async ({ seconds, silent, message }, extra) => {
    const steps = Math.round(seconds * 10);
    const progressToken = silent ? undefined : extra._meta?.progressToken;
    try {
      for (let step = 1; step <= steps; step += 1) {
        await wait(100, extra.signal);
        if (progressToken !== undefined) {
          await extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken, progress: step, total: steps, message: message ?? `step ${step}` },
          });
        }
      }
    } catch {
      record("slow cancelled");
      return text("cancelled");
    }
    record("slow finished");
    return text(`worked ${seconds} s`);
  },
);

server.registerTool("crash", { description: "Exits the server process in the middle of the call." }, async () => {
  record("crash");
  setTimeout(() => process.exit(3), 50);
  return new Promise(() => {});
});

server.registerTool("big", { description: "Returns a long text.", inputSchema: { characters: z.number().int() } }, async ({ characters }) =>
  text("x".repeat(characters)),
);

server.registerTool(
  "structured",
  { description: "Returns structured content only.", outputSchema: { answer: z.number(), unit: z.string() } },
  async () => ({ content: [], structuredContent: { answer: 42, unit: "apples" } }),
);

server.registerTool("fail", { description: "Always fails." }, async () => ({
  content: [{ type: "text", text: "the record is locked" }],
  isError: true,
}));

server.registerTool(
  "environment",
  {
    description: "Lists the names of the process's environment variables, and the values of those asked for.",
    inputSchema: { reveal: z.array(z.string()).optional() },
  },
  async ({ reveal }) => {
    const names = Object.keys(process.env).sort();
    const values = Object.fromEntries((reveal ?? []).map((name) => [name, process.env[name] ?? null]));
    return text(JSON.stringify({ names, values }));
  },
);

server.registerTool(
  "add_tool",
  { description: "Registers a new tool (the client gets tools/list_changed).", inputSchema: { name: z.string() } },
  async ({ name }) => {
    server.registerTool(name, { description: `Added at runtime: ${name}.` }, async () => text(`hello from ${name}`));
    return text(`added ${name}`);
  },
);

await server.connect(new StdioServerTransport());
// As MCP's stdio transport asks: when the client closes stdin, exit, even with a tool still running.
process.stdin.on("end", () => process.exit(0));
record(`started ${process.pid}`);
process.stderr.write(`parley test server ${SERVER_NAME} ready\n`);
if (process.env.MCP_TEST_PRINT_VARIABLE) {
  // A careless server printing its configuration: the client must keep the value out of its log.
  process.stderr.write(`${process.env.MCP_TEST_PRINT_VARIABLE}=${process.env[process.env.MCP_TEST_PRINT_VARIABLE] ?? ""}\n`);
}
