// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} in plain strings is the config syntax.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseMcpConfig } from "../../adapters/mcp/mcp-config.js";
import { startTestHttpMcpServer, type TestHttpMcpServer } from "../fakes/mcp-http-server.js";
import { callRequest, createTestProvider, textOf } from "./mcp-harness.js";

let server: TestHttpMcpServer;
beforeAll(async () => {
  server = await startTestHttpMcpServer({ requiredAuthorization: "Bearer t0k3n-secret" });
});
afterAll(() => server.close());

function configFor(token: string) {
  const text = JSON.stringify({
    mcpServers: {
      remote: { type: "http", url: "${MCP_ORIGIN}/mcp", headers: { Authorization: "Bearer ${TOKEN}" } },
      legacy: { type: "sse", url: "${MCP_ORIGIN}/sse", headers: { Authorization: "Bearer ${TOKEN}" } },
    },
  });
  return parseMcpConfig(text, { MCP_ORIGIN: server.origin, TOKEN: token });
}

describe("remote servers", () => {
  it("reaches a Streamable HTTP server and a legacy SSE server with the configured headers", async () => {
    const { provider } = createTestProvider(configFor("t0k3n-secret"));
    try {
      await provider.start();
      expect(provider.status()).toEqual([
        { name: "remote", state: "ready", toolCount: 1 },
        { name: "legacy", state: "ready", toolCount: 1 },
      ]);
      expect(provider.list().map((tool) => [tool.name, tool.hints])).toEqual([
        ["remote__echo", { readOnly: true }],
        ["legacy__echo", { readOnly: true }],
      ]);
      expect(textOf(await provider.call(callRequest("remote__echo", { text: "hi" })))).toBe("echo: hi");
      expect(textOf(await provider.call(callRequest("legacy__echo", { text: "ho" })))).toBe("echo: ho");
      expect(server.authorizations.length).toBeGreaterThan(4);
      expect(new Set(server.authorizations)).toEqual(new Set(["Bearer t0k3n-secret"]));
    } finally {
      await provider.close();
    }
  });

  it("a refused token leaves the server failed, with a detail that does not show the token", async () => {
    const { provider, logger } = createTestProvider(configFor("wrong-token-value"));
    try {
      await provider.start();
      const [remote, legacy] = provider.status();
      expect(remote).toMatchObject({ state: "failed", toolCount: 0 });
      expect(remote?.detail).toMatch(/401/);
      expect(legacy).toMatchObject({ state: "failed", toolCount: 0 });
      expect(JSON.stringify(provider.status())).not.toContain("wrong-token-value");
      expect(JSON.stringify(logger.lines)).not.toContain("wrong-token-value");
    } finally {
      await provider.close();
    }
  });
});
