import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TINY_PNG_BASE64 } from "../fakes/mcp-test-server-entry.js";
import { callRequest, createTestProvider, scratch, testServer, textOf, waitFor } from "./mcp-harness.js";

const files = scratch();
const { provider, logger } = createTestProvider(
  {
    test: testServer({
      recordFile: files.recordFile,
      environment: { NAMED: "named-value", API_KEY: "sk-hidden-value", MCP_TEST_PRINT_VARIABLE: "API_KEY" },
    }),
  },
  { maxResultChars: 1_000, parentEnvironment: { PATH: process.env.PATH, HOME: "/home/parley-test", USER: "someone", SECRET: "leak" } },
);

beforeAll(() => provider.start());
afterAll(async () => {
  await provider.close();
  files.remove();
});

describe("McpToolProvider on a stdio server", () => {
  it("lists the server's tools as <server>__<tool>, with description, schema and hints", () => {
    expect(provider.status()).toEqual([{ name: "test", state: "ready", toolCount: 12 }]);
    expect(provider.list()).toHaveLength(12);
    const tools = provider.list();
    expect(tools.map((tool) => tool.name)).toContain("test__confirm_with_form");
    const lookup = tools.find((tool) => tool.name === "test__lookup");
    expect(lookup).toMatchObject({
      server: "test",
      remoteName: "lookup",
      description: "Looks a key up.",
      inputSchema: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
      hints: { readOnly: true },
    });
    expect(tools.find((tool) => tool.name === "test__delete_record")?.hints).toEqual({ destructive: true });
    expect(tools.find((tool) => tool.name === "test__set_flag")?.hints).toEqual({ idempotent: true, destructive: false });
    expect(tools.find((tool) => tool.name === "test__big")?.hints).toEqual({});
  });

  it("calls a tool and returns its text", async () => {
    expect(await provider.call(callRequest("test__lookup", { key: "k" }))).toEqual({
      content: [{ type: "text", text: "value of k" }],
      isError: false,
    });
    await provider.call(callRequest("test__delete_record", { id: "7" }));
    expect(files.recorded()).toContain("delete_record 7");
  });

  it("returns an image as a base64 image block", async () => {
    const output = await provider.call(callRequest("test__picture"));
    expect(output.content).toEqual([
      { type: "text", text: "a picture:" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: TINY_PNG_BASE64 } },
    ]);
  });

  it("returns structuredContent as JSON text when the tool gives no text", async () => {
    expect(textOf(await provider.call(callRequest("test__structured")))).toBe('{"answer":42,"unit":"apples"}');
  });

  it("carries isError from the tool", async () => {
    expect(await provider.call(callRequest("test__fail"))).toEqual({
      content: [{ type: "text", text: "the record is locked" }],
      isError: true,
    });
  });

  it("cuts a long result at maxResultChars with a note", async () => {
    const output = await provider.call(callRequest("test__big", { characters: 5_000 }));
    expect(output.content).toEqual([
      { type: "text", text: "x".repeat(1_000) },
      { type: "text", text: "[output cut: 4000 of 5000 characters not shown]" },
    ]);
  });

  it("answers an unknown tool with isError, without throwing", async () => {
    expect(await provider.call(callRequest("test__nope"))).toEqual({
      content: [{ type: "text", text: "unknown tool test__nope" }],
      isError: true,
    });
  });

  it("reports invalid arguments as isError", async () => {
    const output = await provider.call(callRequest("test__lookup", { key: 3 }));
    expect(output.isError).toBe(true);
    expect(textOf(output)).toMatch(/key/);
  });

  it("gives the server process only the variables its entry names, plus PATH and HOME", async () => {
    const output = await provider.call(callRequest("test__environment", { reveal: ["NAMED", "HOME", "USER"] }));
    const seen = JSON.parse(textOf(output)) as { names: string[]; values: Record<string, string | null> };
    expect(seen.names).toEqual(["API_KEY", "HOME", "MCP_TEST_PRINT_VARIABLE", "MCP_TEST_RECORD_FILE", "NAMED", "PATH"]);
    expect(seen.values).toEqual({ NAMED: "named-value", HOME: "/home/parley-test", USER: null });
  });

  it("sends the server's stderr to the log at debug level, with the entry's env values blanked", async () => {
    const stderr = (line: string) => ({ level: "debug", object: { server: "test", line }, message: "mcp server stderr" });
    expect(logger.lines).toContainEqual(stderr("parley test server parley-test ready"));
    // Every env value of the entry is blanked, the printed name (the value of MCP_TEST_PRINT_VARIABLE) too.
    await waitFor(() => logger.lines.some((entry) => entry.object.line === "[redacted]=[redacted]"), 2_000, "the printed variable");
    expect(JSON.stringify(logger.lines)).not.toContain("sk-hidden-value");
  });
});
