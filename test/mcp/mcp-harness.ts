import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { McpServersConfig } from "../../adapters/mcp/mcp-config.js";
import { McpToolProvider, type McpToolProviderOptions } from "../../adapters/mcp/mcp-tool-provider.js";
import type { Logger } from "../../src/ports/logger.js";
import type { ToolCallRequest } from "../../src/ports/tool-provider.js";
import { type TestServerOptions, testServerEntry } from "../fakes/mcp-test-server-entry.js";

/** One log line as the provider wrote it. */
export interface LogLine {
  level: "debug" | "info" | "warn" | "error";
  object: Record<string, unknown>;
  message: string | undefined;
}

/** A Logger that keeps every line, so tests can see what reached the log. */
export function recordingLogger(): Logger & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at =
    (level: LogLine["level"]) =>
    (object: object, message?: string): void => {
      lines.push({ level, object: object as Record<string, unknown>, message });
    };
  return { lines, debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

/** A temporary directory, and the record file the test server appends its side effects to. */
export function scratch(): { directory: string; recordFile: string; recorded: () => string[]; remove: () => void } {
  const directory = mkdtempSync(join(tmpdir(), "parley-mcp-"));
  const recordFile = join(directory, "record.log");
  const recorded = () => {
    try {
      return readFileSync(recordFile, "utf8").split("\n").filter(Boolean);
    } catch {
      return [];
    }
  };
  return { directory, recordFile, recorded, remove: () => rmSync(directory, { recursive: true, force: true }) };
}

/** A stdio entry for the test server, typed as the config module returns it. */
export function testServer(options: TestServerOptions = {}): McpServersConfig[string] {
  return { type: "stdio", ...testServerEntry(options) };
}

/** A provider with short limits, for tests. */
export function createTestProvider(servers: McpServersConfig, overrides: Partial<McpToolProviderOptions> = {}) {
  const logger = recordingLogger();
  const provider = new McpToolProvider({
    servers,
    logger,
    toolTimeoutMs: 5_000,
    startTimeoutMs: 15_000,
    restartBackoff: { initialDelayMs: 50, maxDelayMs: 200 },
    ...overrides,
  });
  return { provider, logger };
}

/** A call request with a fresh signal. */
export function callRequest(name: string, input: Record<string, unknown> = {}, extra: Partial<ToolCallRequest> = {}): ToolCallRequest {
  return { name, input, signal: new AbortController().signal, ...extra };
}

/** Polls until `check` returns true, or fails after `timeoutMs`. */
export async function waitFor(check: () => boolean, timeoutMs = 10_000, what = "the condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Whether a process with this id is still alive. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The text of an output's text blocks, joined. */
export function textOf(output: { content: Array<{ type: string; text?: string }> }): string {
  return output.content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join("\n");
}
