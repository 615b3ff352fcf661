import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeAnthropic, lastToolResults, reply, toolUse } from "../fakes/fake-anthropic.js";

const FILESYSTEM_SERVER = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-filesystem/dist/index.js");

let fake: FakeAnthropic;
let directory: string;

beforeEach(async () => {
  fake = await new FakeAnthropic().start();
  directory = mkdtempSync(join(tmpdir(), "parley-files-"));
  // The README's mcp.json, pointed at this test's folder.
  const config = { mcpServers: { files: { command: "node", args: [FILESYSTEM_SERVER, join(directory, "shared")] } } };
  writeFileSync(join(directory, "mcp.json"), JSON.stringify(config));
  mkdirSync(join(directory, "shared"));
});

afterEach(async () => {
  await fake.close();
  rmSync(directory, { recursive: true, force: true });
});

/** `npm start` in the terminal with the official filesystem server from mcp.json, answering from piped input. */
function runBot(input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      env: {
        PATH: process.env.PATH ?? "",
        ANTHROPIC_BASE_URL: fake.url,
        ANTHROPIC_API_KEY: "sk-test",
        DATABASE_PATH: join(directory, "parley.db"),
        MCP_CONFIG: join(directory, "mcp.json"),
        LOG_LEVEL: "warn",
      },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

describe("the official filesystem MCP server, from the terminal", () => {
  it("Approve: write_file runs once and the file holds exactly the approved content", async () => {
    const target = join(directory, "shared", "notes.txt");
    fake.script({ content: [toolUse("files__write_file", { path: target, content: "ship it\nline two" })] }, reply("Written."));
    const run = await runBot("write the notes\n1\n");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Approve files__write_file?");
    expect(run.stdout).toContain("1. Approve");
    expect(run.stdout).toContain("2. Deny");
    expect(run.stdout).toContain("✓ Approved by you");
    expect(run.stdout).toContain("Parley: Written.");
    expect(readFileSync(target, "utf8")).toBe("ship it\nline two");
    expect(lastToolResults(fake.requests.at(-1))[0]).not.toHaveProperty("is_error");
  });

  it("Deny: the file is never written and the model reads the denial", async () => {
    const target = join(directory, "shared", "never.txt");
    fake.script({ content: [toolUse("files__write_file", { path: target, content: "nope" })] }, reply("Not written."));
    const run = await runBot("write it\n2\n");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("✓ Denied by you");
    expect(existsSync(target)).toBe(false);
    expect(lastToolResults(fake.requests.at(-1))[0]).toMatchObject({ is_error: true, content: "denied by terminal:you: no reason given" });
  });
});
