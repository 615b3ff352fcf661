import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpToolProvider } from "../../adapters/mcp/mcp-tool-provider.js";
import { SqliteSessionStore } from "../../db/sqlite-session-store.js";
import { SILENT_LOGGER } from "../../src/logger.js";
import { testServerEntry } from "../../test/fakes/mcp-test-server-entry.js";
import { percentile } from "../workload.js";

// The same read-only tool of the same local stdio server, called three ways, one call at a time:
// - raw: the official SDK's Client.callTool, nothing else;
// - provider: Parley's McpToolProvider.call (name mapping, timeout and cancel wiring, result mapping);
// - journaled: the provider call between the tool journal's two writes (startToolCall, finishToolCall) on SQLite,
//   which is what the tool phase adds around every call.
// Overhead = each way's p50/p99 minus raw's.
const calls = Number(process.argv[2] ?? 500);
const entry = testServerEntry();
const timings: Record<"raw" | "provider" | "journaled", number[]> = { raw: [], provider: [], journaled: [] };

const raw = new Client({ name: "bench", version: "1.0.0" });
await raw.connect(
  new StdioClientTransport({ command: entry.command, args: entry.args, env: { ...process.env, ...entry.env } as Record<string, string> }),
);
const provider = new McpToolProvider({ servers: { srv: { type: "stdio", ...entry } }, logger: SILENT_LOGGER });
await provider.start();
const directory = mkdtempSync(join(tmpdir(), "parley-mcp-bench-"));
const store = new SqliteSessionStore(join(directory, "mcp.db"));
const session = await store.createSession({
  id: "S",
  conversation: { platform: "slack", workspace: "T", channel: "C", thread: "1" },
  ownerId: "U",
  now: 0,
});
const signal = new AbortController().signal;

try {
  // Warm both paths (process start-up, JIT) before measuring.
  for (let index = 0; index < 20; index++) {
    await raw.callTool({ name: "lookup", arguments: { key: "warm" } });
    await provider.call({ name: "srv__lookup", input: { key: "warm" }, signal });
  }
  for (let index = 0; index < calls; index++) {
    let started = performance.now();
    await raw.callTool({ name: "lookup", arguments: { key: `k${index}` } });
    timings.raw.push(performance.now() - started);

    started = performance.now();
    await provider.call({ name: "srv__lookup", input: { key: `k${index}` }, signal });
    timings.provider.push(performance.now() - started);

    started = performance.now();
    const toolUseId = `toolu_${index}`;
    await store.startToolCall({ sessionId: session.id, toolUseId, name: "srv__lookup", argumentsHash: "h", now: index });
    const output = await provider.call({ name: "srv__lookup", input: { key: `k${index}` }, signal });
    await store.finishToolCall(session.id, toolUseId, { type: "tool_result", tool_use_id: toolUseId, content: output.content }, index);
    timings.journaled.push(performance.now() - started);
  }
} finally {
  await raw.close();
  await provider.close();
  await store.close();
  rmSync(directory, { recursive: true, force: true });
}

const summary = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99) };
};
process.stdout.write(
  `${JSON.stringify({ calls, raw: summary(timings.raw), provider: summary(timings.provider), journaled: summary(timings.journaled) })}\n`,
);
