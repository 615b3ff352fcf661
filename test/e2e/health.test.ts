import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FAKE_DISCORD_TOKEN, FakeDiscord } from "../fakes/fake-discord.js";
import { FAKE_APP_TOKEN, FAKE_BOT_TOKEN, FakeSlackApi } from "../fakes/fake-slack-api.js";
import { FakeSlackSocket } from "../fakes/fake-slack-socket.js";

/** Issue 11, "Health": /healthz and /readyz from the real `npm start`, in the modes that have no Slack HTTP listener. */
let directory: string;
let bot: ChildProcess | undefined;
/** Each test's fakes, closed after the bot has exited. */
let fakes: Array<{ close(): Promise<void> }> = [];

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), "parley-health-"));
});

afterEach(async () => {
  if (bot && bot.exitCode === null) {
    const exited = new Promise((resolve) => bot?.once("exit", resolve));
    bot.kill("SIGTERM");
    await exited;
  }
  bot = undefined;
  for (const fake of fakes) await fake.close();
  fakes = [];
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

/** Starts `npm start`'s entry point with these platform variables, health on PORT. */
function startBot(port: number, platform: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    env: {
      PATH: process.env.PATH ?? "",
      ANTHROPIC_BASE_URL: "http://127.0.0.1:9",
      ANTHROPIC_API_KEY: "sk-test",
      DATABASE_PATH: join(directory, "parley.db"),
      PORT: String(port),
      HOST: "127.0.0.1",
      LOG_LEVEL: "warn",
      ...platform,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

describe("health checks on PORT with Discord only", () => {
  it("/healthz says the database answers, /readyz that Discord is connected; anything else is 404", async () => {
    const discord = await new FakeDiscord().start();
    fakes.push(discord);
    const port = await freePort();
    bot = startBot(port, {
      DISCORD_TOKEN: FAKE_DISCORD_TOKEN,
      DISCORD_APPLICATION_ID: discord.applicationId,
      DISCORD_API_URL: discord.url,
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

describe("health checks on PORT in Slack Socket Mode", () => {
  it("/healthz says the database answers, /readyz that the Socket Mode connection is up, and fails when it drops", async () => {
    const socket = await new FakeSlackSocket().start();
    const slack = await new FakeSlackApi().start();
    slack.socketUrl = socket.url;
    fakes.push(slack, socket);
    const port = await freePort();
    bot = startBot(port, { SLACK_BOT_TOKEN: FAKE_BOT_TOKEN, SLACK_APP_TOKEN: FAKE_APP_TOKEN, SLACK_API_URL: slack.apiUrl });
    const ready = await until(
      "/readyz to be ok",
      async () => {
        const answer = await get(port, "/readyz");
        return answer?.status === 200 ? answer : undefined;
      },
      40_000,
    );
    expect(ready.body).toEqual({ ok: true, checks: { database: "ok", slack: "ok" } });
    expect(await get(port, "/healthz")).toEqual({ status: 200, body: { ok: true, checks: { database: "ok" } } });
    // Connected through apps.connections.open with the app token, not an HTTP endpoint of its own.
    expect(slack.callsOf("apps.connections.open").filter((call) => call.ok).length).toBeGreaterThanOrEqual(1);
    expect((await fetch(`http://127.0.0.1:${port}/slack/events`, { method: "POST" })).status).toBe(404);

    // Slack's socket goes away: still alive, but not ready until it reconnects.
    await socket.close();
    const notReady = await until("/readyz to fail", async () => {
      const answer = await get(port, "/readyz");
      return answer?.status === 503 ? answer : undefined;
    });
    expect(notReady.body).toEqual({ ok: false, checks: { database: "ok", slack: "not connected" } });
    expect((await get(port, "/healthz"))?.status).toBe(200);
  }, 90_000);
});
