import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Logger } from "../../src/ports/logger.js";
import { blankSecrets, secretsOf } from "./failure-detail.js";
import type { McpServerConfig } from "./mcp-config.js";
import { serverEnvironment } from "./server-environment.js";

/** The SDK transport for one configured server; a stdio server's stderr goes to the log, never to the screen. */
export function createTransport(
  name: string,
  config: McpServerConfig,
  parentEnvironment: Readonly<Record<string, string | undefined>>,
  logger: Logger,
): Transport {
  if (config.type !== "stdio") {
    const requestInit = { headers: config.headers };
    return config.type === "http"
      ? new StreamableHTTPClientTransport(new URL(config.url), { requestInit })
      : new SSEClientTransport(new URL(config.url), { requestInit });
  }
  const transport = new StdioClientTransport({
    command: config.command,
    args: config.args,
    env: serverEnvironment(config.env, parentEnvironment),
    ...(config.cwd === undefined ? {} : { cwd: config.cwd }),
    stderr: "pipe",
  });
  // A server may print its own configuration; its env values stay out of the log all the same.
  const secrets = secretsOf(config);
  let pending = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    const lines = (pending + chunk.toString("utf8")).split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines)
      if (line.trim() !== "") logger.debug({ server: name, line: blankSecrets(line, secrets) }, "mcp server stderr");
  });
  return transport;
}
