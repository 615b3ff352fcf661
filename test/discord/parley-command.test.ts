import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { registerParleyCommand } from "../../adapters/discord/register-commands.js";
import type { AdminRequest } from "../../src/ports/conversation.js";
import { FAKE_DISCORD_TOKEN, FakeDiscord } from "../fakes/fake-discord.js";
import { ADMIN, ALICE, DiscordHarness } from "./discord-harness.js";

let harness: DiscordHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function reply(user: typeof ALICE, text: string): Promise<string> {
  const interaction = harness!.discord.command(user, text);
  const callback = await harness!.discord.callbackOf(interaction);
  expect(callback.type).toBe(5);
  expect(Number(callback.data?.flags) & 64).toBe(64);
  const answer = await harness!.until("the command's reply", () => harness!.discord.ephemeralsFor(user.id).at(-1));
  return String(answer.content);
}

describe("/parley on Discord", () => {
  it("passes an admin's command line to the core and answers privately", async () => {
    const seen: AdminRequest[] = [];
    harness = await new DiscordHarness({
      onCommand: async (command) => {
        seen.push(command);
        return { kind: "reply", text: ["2 sessions pending"] };
      },
    }).start();
    expect(await reply(ADMIN, "sessions pending")).toBe("2 sessions pending");
    expect(seen).toEqual([{ text: "sessions pending", actor: { id: ADMIN.id, name: ADMIN.username, isAdmin: true }, conversation: null }]);
  });

  it("refuses a member without Manage Server, even when the command was made visible to them, and audits it", async () => {
    harness = await new DiscordHarness().start();
    expect(await reply(ALICE, "stats")).toContain("Manage Server");
    // The core decides and audits, on Discord as on Slack.
    const audit = harness.store.db.prepare("SELECT actor, action, outcome FROM audit").all();
    expect(audit).toEqual([{ actor: ALICE.id, action: "admin-refused", outcome: "refused" }]);
  });
});

const run = promisify(execFile);
const TSX = "node_modules/.bin/tsx";

describe("npm run register-commands", () => {
  it("registers /parley in the guild, admin-only by default", async () => {
    const discord = await new FakeDiscord().start();
    try {
      const { stdout } = await run(TSX, ["scripts/register-commands.ts"], {
        env: {
          ...process.env,
          DISCORD_TOKEN: FAKE_DISCORD_TOKEN,
          DISCORD_APPLICATION_ID: discord.applicationId,
          DISCORD_API_URL: discord.url,
          DISCORD_GUILD_ID: discord.guildId,
        },
      });
      expect(stdout).toContain(`registered in guild ${discord.guildId}`);
      const put = discord.calls.find((call) => call.method === "PUT");
      expect(put?.path).toBe(`/applications/${discord.applicationId}/guilds/${discord.guildId}/commands`);
      expect(discord.registeredCommands).toMatchObject([
        { name: "parley", default_member_permissions: "32", options: [{ name: "command", type: 3, required: true }] },
      ]);
    } finally {
      await discord.close();
    }
  });

  it("registers globally without a guild id", async () => {
    const discord = await new FakeDiscord().start();
    try {
      const where = await registerParleyCommand({ token: FAKE_DISCORD_TOKEN, applicationId: discord.applicationId, apiUrl: discord.url });
      expect(where).toBe("globally");
      expect(discord.calls.find((call) => call.method === "PUT")?.path).toBe(`/applications/${discord.applicationId}/commands`);
      expect(discord.registeredCommands[0]).toMatchObject({ name: "parley", contexts: [0] });
    } finally {
      await discord.close();
    }
  });

  it("names the missing variable and registers nothing", async () => {
    const failure = await run(TSX, ["scripts/register-commands.ts"], { env: { ...process.env, DISCORD_TOKEN: "" } }).catch(
      (error: { stderr: string; code: number }) => error,
    );
    expect("code" in failure && failure.code).toBe(1);
    expect("stderr" in failure ? failure.stderr : "").toContain("DISCORD_TOKEN");
  });
});
