import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ask, FakeAnthropic, lastToolResults, reply } from "../fakes/fake-anthropic.js";

const DATABASE_URL = process.env.PARLEY_TEST_DATABASE_URL ?? "postgres://root@127.0.0.1:5432/test";

let fake: FakeAnthropic;
let schema: string;
let admin: pg.Client;

beforeEach(async () => {
  fake = await new FakeAnthropic().start();
  schema = `parley_bot_${randomBytes(6).toString("hex")}`;
  admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
});

afterEach(async () => {
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end();
  await fake.close();
});

/** `npm start`'s entry point on PostgreSQL: DATABASE_URL with this test's own schema as search_path. */
function runBot(input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const url = `${DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      env: {
        PATH: process.env.PATH ?? "",
        ANTHROPIC_BASE_URL: fake.url,
        ANTHROPIC_API_KEY: "sk-test",
        DATABASE_URL: url,
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

describe("the bot on PostgreSQL (DATABASE_URL)", () => {
  it("keeps a pending ask in PostgreSQL across a restart and takes its answer on the next start", async () => {
    fake.script(ask({ type: "confirm", question: "Delete the cache?" }));
    const first = await runBot("clean up\n");
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("Delete the cache?");
    const stored = await admin.query(`SELECT status FROM ${schema}.asks`);
    expect(stored.rows).toEqual([{ status: "pending" }]);

    fake.script(reply("Cache deleted."));
    const second = await runBot("yes\n");
    expect(second.code).toBe(0);
    expect(second.stdout).toContain("Delete the cache?");
    expect(second.stdout).toContain("Parley: Cache deleted.");
    expect(JSON.parse(lastToolResults(fake.requests.at(-1))[0]!.content)).toEqual({ ok: true, value: true });
    expect((await admin.query(`SELECT status FROM ${schema}.asks`)).rows).toEqual([{ status: "answered" }]);
  });
});
