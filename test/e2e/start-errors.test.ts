import { spawn } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FAKE_DISCORD_TOKEN, FakeDiscord } from "../fakes/fake-discord.js";
import { MESSAGE_CONTENT_INTENT } from "../fakes/fake-discord-rest.js";
import { FAKE_BOT_TOKEN, FakeSlackApi } from "../fakes/fake-slack-api.js";

/** Issue 11, "Errors a newcomer can act on": the real `npm start` entry point, refusing to start with one line. */

/**
 * Root may write anywhere, so a read-only folder or file would not stop a bot run as root: under root (a
 * container, CI) the read-only cases run the bot as `nobody`, in a folder that `nobody` owns.
 */
const UNPRIVILEGED = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : undefined;

let directory: string;

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), "parley-start-"));
});

/** Hands a test file or folder to the user the read-only cases run as. */
function giveToBot(path: string): void {
  if (UNPRIVILEGED) chownSync(path, UNPRIVILEGED.uid, UNPRIVILEGED.gid);
}

afterEach(() => {
  rmSync(directory, { recursive: true, force: true });
});

interface StartOptions {
  /** `pipe` (the default) feeds nothing and closes; `ignore` is /dev/null, as in a container without -i. */
  stdin?: "pipe" | "ignore";
  /** Run as `nobody` when the tests run as root (see UNPRIVILEGED). */
  unprivileged?: boolean;
}

/** Starts the bot with only these variables; a bot still running after 20 s is killed, and the test fails on it. */
function startBot(
  environment: Record<string, string>,
  options: StartOptions = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      env: {
        PATH: process.env.PATH ?? "",
        // Nothing listens there: every case below must stop before the first model call.
        ANTHROPIC_BASE_URL: "http://127.0.0.1:9",
        ANTHROPIC_API_KEY: "sk-test",
        DATABASE_PATH: join(directory, "parley.db"),
        LOG_LEVEL: "warn",
        ...environment,
      },
      stdio: [options.stdin ?? "pipe", "pipe", "pipe"],
      ...(options.unprivileged ? UNPRIVILEGED : {}),
    });
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin?.end();
  });
}

describe("a platform variable with a typo", () => {
  it.each([
    ["SLACK_TOKEN", "SLACK_BOT_TOKEN"],
    ["DISCORD_BOT_TOKEN", "DISCORD_TOKEN"],
    ["SLACK_SIGNINGSECRET", "SLACK_SIGNING_SECRET"],
    ["SLACK_APP_TOKN", "SLACK_APP_TOKEN"],
    ["ANTHROPIC_KEY", "ANTHROPIC_API_KEY"],
    ["LOG_LEVLE", "LOG_LEVEL"],
  ])("%s stops the bot, naming %s", async (typo, meant) => {
    const run = await startBot({ [typo]: "xoxb-some-value" });
    expect(run.stderr).toBe(`parley: invalid configuration: ${typo}: is not a variable Parley reads; did you mean ${meant}?\n`);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    // Refused before anything was opened.
    expect(existsSync(join(directory, "parley.db"))).toBe(false);
  });

  it("an unknown SLACK_ variable close to nothing lists the Slack variables Parley reads", async () => {
    const run = await startBot({ SLACK_WEBHOOK_URL: "https://hooks.slack.com/services/x" });
    expect(run.stderr).toBe(
      "parley: invalid configuration: SLACK_WEBHOOK_URL: is not a variable Parley reads; " +
        "it reads SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET, SLACK_APP_TOKEN, SLACK_API_URL\n",
    );
    expect(run.code).toBe(1);
  });

  it("is listed first, with the other problems it causes below it", async () => {
    const run = await startBot({ SLACK_BOT_TOKEN: "xoxb-1", SLACK_SIGNINGSECRET: "s3cret" });
    expect(run.code).toBe(1);
    expect(run.stderr.split("\n")).toEqual([
      "parley: invalid configuration:",
      "  SLACK_SIGNINGSECRET: is not a variable Parley reads; did you mean SLACK_SIGNING_SECRET?",
      "  SLACK_SIGNING_SECRET: is required with SLACK_BOT_TOKEN in HTTP mode (or set SLACK_APP_TOKEN)",
      "",
    ]);
    expect(run.stderr).not.toContain("s3cret");
  });
});

describe("the terminal without a keyboard", () => {
  it("says so in one line and exits 1 when standard input is /dev/null", async () => {
    const run = await startBot({}, { stdin: "ignore" });
    expect(run.stderr).toBe(
      "parley: no Slack or Discord variables are set, so Parley would run in the terminal, but standard input is not a " +
        "keyboard or a pipe (it is /dev/null or closed); set SLACK_BOT_TOKEN (with SLACK_SIGNING_SECRET or " +
        "SLACK_APP_TOKEN) or DISCORD_TOKEN and DISCORD_APPLICATION_ID, or run npm start in a terminal\n",
    );
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
  });

  it("still runs from a pipe that ends at once, and exits 0", async () => {
    const run = await startBot({});
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Parley is listening.");
  });
});

describe("a DATABASE_PATH the database cannot live at", () => {
  const expectRefusal = async (path: string, reason: string, options: StartOptions = {}) => {
    const run = await startBot({ DATABASE_PATH: path }, options);
    expect(run.stderr).toBe(`parley: cannot use DATABASE_PATH=${path}: ${reason}\n`);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
  };

  it("a read-only folder", async () => {
    const folder = join(directory, "read-only");
    mkdirSync(folder);
    giveToBot(directory);
    giveToBot(folder);
    chmodSync(folder, 0o555);
    await expectRefusal(join(folder, "parley.db"), `the folder ${folder} is not writable`, { unprivileged: true });
    await expectRefusal(join(folder, "new", "parley.db"), `cannot create ${join(folder, "new")}: ${folder} is not writable`, {
      unprivileged: true,
    });
  });

  it("a file that is not SQLite", async () => {
    const path = join(directory, "notes.db");
    writeFileSync(path, "these are my notes, not a database\n".repeat(10));
    await expectRefusal(path, "the file is not a SQLite database");
  });

  it("a path under a regular file", async () => {
    const file = join(directory, "parley.db");
    writeFileSync(file, "");
    await expectRefusal(join(file, "data", "parley.db"), `${file} is a file, not a folder`);
  });

  it("a read-only database file", async () => {
    const path = join(directory, "parley.db");
    writeFileSync(path, "");
    giveToBot(directory);
    giveToBot(path);
    chmodSync(path, 0o444);
    await expectRefusal(path, "the file is read-only", { unprivileged: true });
  });

  it("a folder", async () => {
    await expectRefusal(directory, "it is a folder, not a file");
  });

  it("a path under /proc, refused at once instead of hanging", async () => {
    await expectRefusal("/proc/parley/parley.db", "it is under /proc, a kernel file system, where no database can be kept");
  });
});

describe("a platform that refuses the set-up", () => {
  let slack: FakeSlackApi;
  let discord: FakeDiscord;

  beforeEach(async () => {
    slack = await new FakeSlackApi().start();
    discord = await new FakeDiscord().start();
  });

  afterEach(async () => {
    await slack.close();
    await discord.close();
  });

  const slackHttp = (port: number) => ({
    SLACK_BOT_TOKEN: FAKE_BOT_TOKEN,
    SLACK_SIGNING_SECRET: "signing-secret",
    SLACK_API_URL: slack.apiUrl,
    PORT: String(port),
    HOST: "127.0.0.1",
  });

  it("PORT in use names PORT and the address", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const run = await startBot(slackHttp(port));
      expect(run.stderr).toBe(
        `parley: PORT=${port}: 127.0.0.1:${port} is already in use; stop what listens there or set PORT to a free port\n`,
      );
      expect(run.code).toBe(1);
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });

  it("HOST that is not an address of this machine names HOST", async () => {
    // 192.0.2.1 is TEST-NET-1, reserved for documentation: no machine has it.
    const run = await startBot({ ...slackHttp(0), HOST: "192.0.2.1" });
    expect(run.stderr).toBe(
      "parley: HOST=192.0.2.1: not an address of this machine; set HOST to 127.0.0.1, or 0.0.0.0 for every address\n",
    );
    expect(run.code).toBe(1);
  });

  it("a bot token Slack refuses names SLACK_BOT_TOKEN", async () => {
    const run = await startBot({ ...slackHttp(0), SLACK_BOT_TOKEN: "xoxb-revoked" });
    expect(run.stderr).toBe(
      "parley: Slack refused SLACK_BOT_TOKEN (invalid_auth): copy the Bot User OAuth Token (xoxb-…) from the app's OAuth & Permissions page\n",
    );
    expect(run.code).toBe(1);
    expect(run.stderr).not.toContain("xoxb-revoked");
  });

  it("an app token Slack refuses names SLACK_APP_TOKEN", async () => {
    const run = await startBot({ ...slackHttp(0), SLACK_SIGNING_SECRET: "", SLACK_APP_TOKEN: "xapp-revoked" });
    expect(run.stderr).toBe(
      "parley: Slack refused SLACK_APP_TOKEN (invalid_auth): create an app-level token (xapp-…) with connections:write under the app's Basic Information\n",
    );
    expect(run.code).toBe(1);
    // The bot token was fine: the refusal came from apps.connections.open.
    expect(slack.callsOf("auth.test").map((call) => call.ok)).toEqual([true]);
  });

  const discordEnvironment = () => ({
    DISCORD_TOKEN: FAKE_DISCORD_TOKEN,
    DISCORD_APPLICATION_ID: discord.applicationId,
    DISCORD_API_URL: discord.url,
  });

  it("Discord closing with 4014 says to enable the Message Content intent or set DISCORD_MESSAGE_CONTENT=false", async () => {
    discord.gateway.disallowedIntents = MESSAGE_CONTENT_INTENT;
    const run = await startBot(discordEnvironment());
    expect(run.stderr).toBe(
      "parley: Discord refused the Message Content intent (gateway close 4014): enable it under Bot → Privileged Gateway " +
        "Intents in the developer portal, or set DISCORD_MESSAGE_CONTENT=false\n",
    );
    expect(run.code).toBe(1);
  });

  it("a Discord token the API refuses names DISCORD_TOKEN", async () => {
    const run = await startBot({ ...discordEnvironment(), DISCORD_TOKEN: "not-the-token" });
    expect(run.stderr).toBe(
      "parley: Discord refused DISCORD_TOKEN (401 Unauthorized): copy the token from the Bot page of the developer portal\n",
    );
    expect(run.code).toBe(1);
  });
});

describe("LOG_LEVEL written in capitals", () => {
  it("LOG_LEVEL=INFO starts the bot at info level instead of refusing the configuration", async () => {
    const { readFile } = await import("node:fs/promises");
    const run = await startBot({ LOG_LEVEL: "INFO" });
    expect(run.stderr).not.toContain("invalid configuration");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Parley is listening.");
    // Info lines reach the terminal's log file: the level took effect, it was not just tolerated.
    const log = await readFile(join(directory, "parley.log"), "utf8");
    expect(log).toContain('"level":30');
    expect(log).toContain('"msg":"parley-started"');
  });
});
