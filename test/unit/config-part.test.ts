import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { loadConfigPart } from "../../src/config.js";
import { ConfigError } from "../../src/ports/errors.js";

const ROOT = join(import.meta.dirname, "..", "..");
const REQUIRED = { keys: ["DISCORD_TOKEN", "DISCORD_APPLICATION_ID"] as const, purpose: "to register /parley" };
const KEYS = ["DISCORD_TOKEN", "DISCORD_APPLICATION_ID", "DISCORD_GUILD_ID"] as const;

function problemsOf(environment: Record<string, string | undefined>): string {
  try {
    loadConfigPart(environment, KEYS, REQUIRED);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  return "no problem";
}

describe("loadConfigPart", () => {
  it("reports a bad variable and a missing required one in the same run", () => {
    expect(problemsOf({ DISCORD_APPLICATION_ID: "123", DISCORD_GUILD_ID: "my-server", DISCORD_TOKEN: "  " })).toBe(
      "invalid configuration:\n  DISCORD_GUILD_ID: must be a numeric server id\n  DISCORD_TOKEN: is required to register /parley",
    );
  });

  it("names every missing required variable", () => {
    expect(problemsOf({})).toBe(
      "invalid configuration:\n  DISCORD_TOKEN: is required to register /parley\n  DISCORD_APPLICATION_ID: is required to register /parley",
    );
  });

  it("returns the parsed part when everything is there", () => {
    expect(loadConfigPart({ DISCORD_TOKEN: " t ", DISCORD_APPLICATION_ID: "123" }, KEYS, REQUIRED)).toEqual({
      DISCORD_TOKEN: "t",
      DISCORD_APPLICATION_ID: "123",
      DISCORD_GUILD_ID: undefined,
    });
  });
});

describe("npm run register-commands with a bad guild id and no token", () => {
  it("lists both problems at once and registers nothing", async () => {
    // Run from an empty folder, so a developer's .env cannot fill in the missing token.
    const directory = mkdtempSync(join(tmpdir(), "parley-register-"));
    const failure = await promisify(execFile)(join(ROOT, "node_modules/.bin/tsx"), [join(ROOT, "scripts/register-commands.ts")], {
      cwd: directory,
      env: { PATH: process.env.PATH ?? "", DISCORD_APPLICATION_ID: "123", DISCORD_GUILD_ID: "my-server" },
    })
      .catch((error: { stderr: string; code: number }) => error)
      .finally(() => rmSync(directory, { recursive: true, force: true }));
    expect("code" in failure && failure.code).toBe(1);
    expect("stderr" in failure ? failure.stderr : "").toBe(
      "invalid configuration:\n  DISCORD_GUILD_ID: must be a numeric server id\n  DISCORD_TOKEN: is required to register /parley\n",
    );
  });
});
