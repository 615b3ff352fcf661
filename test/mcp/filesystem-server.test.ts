import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callRequest, createTestProvider, scratch, textOf } from "./mcp-harness.js";

const SERVER_PATH = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-filesystem/dist/index.js");

const files = scratch();
const { provider } = createTestProvider({
  files: { type: "stdio", command: process.execPath, args: [SERVER_PATH, files.directory], env: {} },
});

beforeAll(() => provider.start());
afterAll(async () => {
  await provider.close();
  files.remove();
});

describe("the official filesystem server", () => {
  it("lists its tools under files__, with its read-only hints", () => {
    expect(provider.status()[0]).toMatchObject({ name: "files", state: "ready" });
    const tools = provider.list();
    expect(tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(["files__write_file", "files__read_text_file", "files__list_directory"]),
    );
    expect(tools.find((tool) => tool.name === "files__read_text_file")?.hints.readOnly).toBe(true);
    expect(tools.find((tool) => tool.name === "files__write_file")?.hints.readOnly).toBe(false);
  });

  it("writes a file with the exact content and reads it back", async () => {
    const path = join(files.directory, "note.txt");
    const content = "line one\nligne deux — é\n";
    const written = await provider.call(callRequest("files__write_file", { path, content }));
    expect(written.isError).toBe(false);
    expect(readFileSync(path, "utf8")).toBe(content);
    const read = await provider.call(callRequest("files__read_text_file", { path }));
    expect(read).toEqual({ content: [{ type: "text", text: content }], isError: false });
  });

  it("refuses a path outside the allowed directory as an isError result", async () => {
    const output = await provider.call(callRequest("files__read_text_file", { path: "/etc/hostname" }));
    expect(output.isError).toBe(true);
    expect(textOf(output)).toMatch(/denied|outside/i);
  });
});
