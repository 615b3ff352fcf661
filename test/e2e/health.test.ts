import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FAKE_DISCORD_TOKEN, FakeDiscord } from "../fakes/fake-discord.js";

/** Issue 11, "Health": /healthz and /readyz from the real `npm start`, in a mode that has no Slack listener. */
let directory: string;
let discord: FakeDiscord;
let bot: ChildProcess | undefined;

beforeEach(async () => {
  directory = mkdtempSync(join(tmpdir(), "parley-health-"));
  discord = await new FakeDiscord().start();
});

afterEach(async () => {
  if (bot && bot.exitCode === null) {
    const exited = new Promise((resolve) => bot?.once("exit", resolve));
    bot.kill("SIGTERM");
    await exited;
  }
  bot = undefined;
  await discord.close();
  rmSync(directory, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function get(port: number, path: string): Promise<{ status: number; body: unknown } | undefined> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(1000) });
    return { status: response.status, body: await response.json() };
  } catch {
    return undefined;
  }
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("health checks on PORT with Discord only", () => {
  it("/healthz says the database answers, /readyz that Discord is connected; anything else is 404", async () => {
    const port = await freePort();
    bot = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      env: {
        PATH: process.env.PATH ?? "",
        ANTHROPIC_BASE_URL: "http://127.0.0.1:9",
        ANTHROPIC_API_KEY: "sk-test",
        DATABASE_PATH: join(directory, "parley.db"),
        DISCORD_TOKEN: FAKE_DISCORD_TOKEN,
        DISCORD_APPLICATION_ID: discord.applicationId,
        DISCORD_API_URL: discord.url,
        PORT: String(port),
        HOST: "127.0.0.1",
        LOG_LEVEL: "warn",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const ready = await until("/readyz to be ok", async () => {
      const answer = await get(port, "/readyz");
      return answer?.status === 200 ? answer : undefined;
    });
    expect(ready.body).toEqual({ ok: true, checks: { database: "ok", discord: "ok" } });
    expect(await get(port, "/healthz")).toEqual({ status: 200, body: { ok: true, checks: { database: "ok" } } });
    const other = await fetch(`http://127.0.0.1:${port}/slack/events`);
    expect(other.status).toBe(404);

    // The gateway goes away: the process is still alive, but must get no traffic until Discord is back.
    await discord.gateway.close();
    const notReady = await until("/readyz to fail", async () => {
      const answer = await get(port, "/readyz");
      return answer?.status === 503 ? answer : undefined;
    });
    expect(notReady.body).toEqual({ ok: false, checks: { database: "ok", discord: "not connected" } });
    expect((await get(port, "/healthz"))?.status).toBe(200);
  });
});
