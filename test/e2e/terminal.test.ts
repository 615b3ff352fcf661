import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ask, FakeAnthropic, lastToolResults, reply, toolUse } from "../fakes/fake-anthropic.js";
import { tempDatabasePath } from "../support/harness.js";

let fake: FakeAnthropic;
let database: ReturnType<typeof tempDatabasePath>;

beforeEach(async () => {
  fake = await new FakeAnthropic().start();
  database = tempDatabasePath();
});

afterEach(async () => {
  await fake.close();
  database.cleanup();
});

/** Runs `npm start`'s entry point as a child process with piped standard input. */
function runBot(input: string, environment: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      env: {
        PATH: process.env.PATH ?? "",
        ANTHROPIC_BASE_URL: fake.url,
        ANTHROPIC_API_KEY: "sk-test-secret",
        DATABASE_PATH: database.path,
        LOG_LEVEL: "warn",
        ...environment,
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

describe("the terminal adapter (npm start with no platform variables)", () => {
  it("runs a full ask round trip with piped input and exits 0", async () => {
    fake.script(
      ask({ type: "select", question: "Which environment?", options: ["staging", "production"] }),
      reply("Deploying to production."),
    );
    const run = await runBot("deploy the app\n2\n");
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Which environment?");
    expect(run.stdout).toContain("2. production");
    expect(run.stdout).toContain("Parley: Deploying to production.");
    expect(JSON.parse(lastToolResults(fake.requests.at(-1))[0]!.content)).toEqual({ ok: true, value: "production" });
  });

  it("keeps a pending ask across a restart and takes its answer on the next start", async () => {
    fake.script(ask({ type: "confirm", question: "Delete the cache?" }));
    const first = await runBot("clean up\n");
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("Delete the cache?");

    fake.script(reply("Cache deleted."));
    const second = await runBot("yes\n");
    expect(second.code).toBe(0);
    expect(second.stdout).toContain("Delete the cache?");
    expect(second.stdout).toContain("Parley: Cache deleted.");
    expect(JSON.parse(lastToolResults(fake.requests.at(-1))[0]!.content)).toEqual({ ok: true, value: true });
  });

  it("stop at a waiting card ends the turn without calling the model again", async () => {
    fake.script(ask({ type: "confirm", question: "Delete the cache?" }), reply("never sent"));
    const run = await runBot("clean up\nstop\n");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("type cancel to cancel, or stop to end the turn");
    expect(run.stdout).toContain("⏹ Stopped");
    expect(fake.requests).toHaveLength(1);
  });

  it("collects a form field by field and hides the password everywhere but the model", async () => {
    fake.script(
      ask({
        type: "form",
        question: "Database access",
        fields: [
          { name: "host", label: "Host", type: "text", required: true },
          { name: "port", label: "Port", type: "number" },
          { name: "password", label: "Password", type: "password", required: true },
          { name: "tls", label: "Use TLS", type: "toggle" },
        ],
      }),
      reply("Connected."),
    );
    const run = await runBot("connect\ndb.local\n5432\nhunter2-very-secret\nyes\n");
    expect(run.code).toBe(0);
    expect(JSON.parse(lastToolResults(fake.requests.at(-1))[0]!.content)).toEqual({
      ok: true,
      value: { host: "db.local", port: 5432, password: "hunter2-very-secret", tls: true },
    });
    expect(run.stdout).toContain("Password: ••••");
    expect(run.stdout).not.toContain("hunter2-very-secret");
  });

  it("on SIGTERM finishes the running turn, closes the database and exits 0", async () => {
    fake.script({ content: [{ type: "text", text: "Finished after the signal." }], delayMs: 800 });
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      env: {
        PATH: process.env.PATH ?? "",
        ANTHROPIC_BASE_URL: fake.url,
        ANTHROPIC_API_KEY: "sk-test",
        DATABASE_PATH: database.path,
        LOG_LEVEL: "warn",
      },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stdin.write("take your time\n");
    while (fake.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    child.kill("SIGTERM");
    const code = await new Promise((resolve) => child.on("close", resolve));
    expect(code).toBe(0);
    expect(stdout).toContain("Parley: Finished after the signal.");
    // A clean close checkpoints the WAL into the database file and removes it.
    expect(existsSync(`${database.path}-wal`)).toBe(false);
  });

  it("reads stop while a turn runs, and stops the turn at its next step", async () => {
    fake.script(
      { content: [toolUse("current_time", {})], stopReason: "tool_use", delayMs: 1500 },
      reply("This reply must never be asked for."),
    );
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      env: { PATH: process.env.PATH ?? "", ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: "sk-test", DATABASE_PATH: database.path },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stdin.write("what time is it?\n");
    while (fake.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    // Typed while the model is still thinking: the turn has not finished, so the old loop never read it.
    child.stdin.end("stop\n");
    const code = await new Promise((resolve) => child.on("close", resolve));
    expect(code).toBe(0);
    expect(stdout).toContain("⏹ Stopped.");
    expect(stdout).not.toContain("This reply must never be asked for.");
    expect(fake.requests).toHaveLength(1);
  });

  it("writes its logs to parley.log beside the database, not between the lines of the conversation", async () => {
    fake.script(reply("Hello."));
    const run = await runBot("hi\n", { LOG_LEVEL: "info" });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe("");
    expect(run.stdout).not.toContain('{"level"');
    const logPath = join(dirname(database.path), "parley.log");
    expect(run.stdout).toContain(`Logs go to ${logPath}.`);
    expect(readFileSync(logPath, "utf8")).toContain('"msg":"parley-started"');
  });

  it("does not reprint the outcomes of earlier questions on the next start, and never prints a blank answer", async () => {
    fake.script(ask({ type: "input", question: "Any comment?" }), reply("Noted."));
    const first = await runBot("review this\n\n");
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("✓ (empty) by you");
    expect(first.stdout).not.toMatch(/✓ +by you/);
    expect(JSON.parse(lastToolResults(fake.requests.at(-1))[0]!.content)).toEqual({ ok: true, value: "" });

    const second = await runBot("");
    expect(second.code).toBe(0);
    expect(second.stdout).toContain("Parley is listening.");
    expect(second.stdout).not.toContain("✓");
  });

  it("stops with a message naming the variable when the configuration is bad", async () => {
    const run = await runBot("", { MAX_ASK_USER_PER_TURN: "lots", ANSWER_POLICY: "everyone" });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("MAX_ASK_USER_PER_TURN");
    expect(run.stderr).toContain("ANSWER_POLICY");
  });
});
