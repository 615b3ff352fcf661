import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The test MCP server's script; run with `process.execPath --import <TSX_LOADER_URL> <path>`. */
export const MCP_TEST_SERVER_PATH = fileURLToPath(new URL("./mcp-test-server.ts", import.meta.url));

/**
 * tsx's loader as a file URL: `--import tsx` would resolve from the child's working directory, which a config's
 * `cwd` may move out of the repository.
 */
export const TSX_LOADER_URL = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

/** The 1×1 transparent PNG the `picture` tool returns. */
export const TINY_PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

export interface TestServerOptions {
  /** Each side effect appends a line here (`MCP_TEST_RECORD_FILE`). */
  recordFile?: string;
  /** The name the server gives itself (`MCP_TEST_SERVER_NAME`). */
  serverName?: string;
  /** Exit at once, before speaking MCP (`MCP_TEST_CRASH_ON_START=1`). */
  crashOnStart?: boolean;
  /** More variables for the server's environment. */
  environment?: Record<string, string>;
}

/** An `mcpServers` stdio entry that starts the test server: `{ command, args, env }`, as in an mcp.json file. */
export function testServerEntry(options: TestServerOptions = {}): { command: string; args: string[]; env: Record<string, string> } {
  const env: Record<string, string> = { ...options.environment };
  if (options.recordFile) env.MCP_TEST_RECORD_FILE = options.recordFile;
  if (options.serverName) env.MCP_TEST_SERVER_NAME = options.serverName;
  if (options.crashOnStart) env.MCP_TEST_CRASH_ON_START = "1";
  return { command: process.execPath, args: ["--import", TSX_LOADER_URL, MCP_TEST_SERVER_PATH], env };
}
