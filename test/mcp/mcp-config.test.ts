// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} in plain strings is the config syntax under test.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadMcpConfig, parseMcpConfig } from "../../adapters/mcp/mcp-config.js";
import { ConfigError } from "../../src/ports/errors.js";

const config = (servers: object) => JSON.stringify({ mcpServers: servers });

function configError(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("expected a ConfigError");
}

describe("parseMcpConfig", () => {
  it("reads the example of DESIGN §11: a stdio server and a Streamable HTTP server with an expanded header", () => {
    const text = config({
      files: { command: "node", args: ["./server.js", "/srv/docs"] },
      github: { type: "http", url: "https://example.com/mcp", headers: { Authorization: "Bearer ${GITHUB_TOKEN}" } },
    });
    expect(parseMcpConfig(text, { GITHUB_TOKEN: "ghp_secret" })).toEqual({
      files: { type: "stdio", command: "node", args: ["./server.js", "/srv/docs"], env: {} },
      github: { type: "http", url: "https://example.com/mcp", headers: { Authorization: "Bearer ghp_secret" } },
    });
  });

  it("expands ${VAR} and ${VAR:-default} in every string: command, args, env, cwd, url", () => {
    const text = config({
      local: { type: "stdio", command: "${NODE:-node}", args: ["${ROOT}/a", "${MISSING:-x}"], env: { KEY: "${KEY}" }, cwd: "${ROOT}" },
      legacy: { type: "sse", url: "http://${HOST:-127.0.0.1}:${PORT}/sse" },
    });
    const parsed = parseMcpConfig(text, { ROOT: "/srv", KEY: "k1", PORT: "8080", NODE: "" });
    expect(parsed.local).toEqual({ type: "stdio", command: "node", args: ["/srv/a", "x"], env: { KEY: "k1" }, cwd: "/srv" });
    expect(parsed.legacy).toEqual({ type: "sse", url: "http://127.0.0.1:8080/sse", headers: {} });
  });

  it("keeps an expanded value as it is, without expanding what it contains", () => {
    const parsed = parseMcpConfig(config({ a: { command: "run", args: ["${A}"] } }), { A: "${B}", B: "no" });
    expect(parsed.a).toMatchObject({ args: ["${B}"] });
  });

  it("names the file, the server, the field and the variable when a variable is unset without default", () => {
    const message = configError(() =>
      parseMcpConfig(
        config({ github: { type: "http", url: "https://x", headers: { Authorization: "Bearer ${GITHUB_TOKEN}" } } }),
        {},
        "mcp.json",
      ),
    );
    expect(message).toBe('mcp.json: server "github": headers.Authorization: ${GITHUB_TOKEN} is not set and has no default');
  });

  it("lists every problem of every server at once", () => {
    const message = configError(() =>
      parseMcpConfig(
        config({
          a: { command: "" },
          b: { type: "http" },
          c: { type: "websocket", url: "ws://x" },
          d: { type: "sse", url: "ftp://x" },
          e: { command: "run", env: { TOKEN: 3 } },
          f: "node server.js",
        }),
        {},
        "mcp.json",
      ),
    );
    expect(message.split("\n")).toEqual([
      'mcp.json: server "a": command: Too small: expected string to have >=1 characters',
      'mcp.json: server "b": url: Invalid input: expected string, received undefined',
      'mcp.json: server "c": type: expected "stdio", "http" or "sse"',
      'mcp.json: server "d": url: expected an http:// or https:// URL',
      'mcp.json: server "e": env.TOKEN: Invalid input: expected string, received number',
      'mcp.json: server "f": expected an object',
    ]);
  });

  it("refuses text that is not JSON, or JSON without mcpServers, naming the file", () => {
    expect(configError(() => parseMcpConfig("{ mcpServers: ", {}, "mcp.json"))).toMatch(/^mcp\.json: not valid JSON/);
    expect(configError(() => parseMcpConfig(JSON.stringify({ servers: {} }), {}, "mcp.json"))).toBe(
      'mcp.json: expected an object with an "mcpServers" object',
    );
  });

  it("never quotes a secret value in an error", () => {
    const message = configError(() =>
      parseMcpConfig(config({ a: { type: "http", url: "${URL}", headers: { Authorization: "Bearer ${TOKEN}" } } }), {
        URL: "not a url with sk-secret",
        TOKEN: "sk-secret",
      }),
    );
    expect(message).toContain("url: expected an http:// or https:// URL");
    expect(message).not.toContain("sk-secret");
  });
});

describe("loadMcpConfig", () => {
  it("reads the file at the path and names it in errors", async () => {
    const directory = mkdtempSync(join(tmpdir(), "parley-mcp-config-"));
    const path = join(directory, "mcp.json");
    writeFileSync(path, config({ a: { command: "run", args: ["${X}"] } }));
    await expect(loadMcpConfig(path, { X: "1" })).resolves.toEqual({ a: { type: "stdio", command: "run", args: ["1"], env: {} } });
    await expect(loadMcpConfig(path, {})).rejects.toThrow(`${path}: server "a": args[0]: \${X} is not set and has no default`);
    await expect(loadMcpConfig(join(directory, "missing.json"), {})).rejects.toThrow(
      `${join(directory, "missing.json")}: cannot read the MCP config (ENOENT)`,
    );
  });
});
