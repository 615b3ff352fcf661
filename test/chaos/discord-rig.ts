import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FakeAnthropic } from "../fakes/fake-anthropic.js";
import { FAKE_DISCORD_TOKEN, FakeDiscord, type FakeUser } from "../fakes/fake-discord.js";
import { snowflake } from "../fakes/fake-discord-payloads.js";
import { BotProcess, freePort } from "./bot-process.js";
import { ChaosModel } from "./chaos-model.js";
import { DiscordChaosProxy } from "./discord-proxy.js";
import { sleep } from "./slack-proxy.js";

/** The people of the Discord run: the owner of every session, a stranger who may not answer, a server admin. */
export const DISCORD_OWNER: FakeUser = { id: snowflake(), username: "alice" };
export const DISCORD_STRANGER: FakeUser = { id: snowflake(), username: "bob" };
export const DISCORD_ADMIN: FakeUser = { id: snowflake(), username: "carol", admin: true };

export interface DiscordChaosRig {
  anthropic: FakeAnthropic;
  discord: FakeDiscord;
  proxy: DiscordChaosProxy;
  model: ChaosModel;
  bot: BotProcess;
  databasePath: string;
  logPath: string;
  /** Starts the bot and waits until /readyz says Discord is connected (/healthz answers before the gateway is up). */
  startBot(): Promise<void>;
  /** The lines the chaos MCP server recorded (`start deploy s3`, `done deploy s3`, …). */
  toolRecords(): string[];
  close(): Promise<void>;
}

/**
 * The fakes in this process (FakeAnthropic with the chaos model, FakeDiscord's REST behind the chaos proxy, its
 * gateway direct) and the real bot as a child process on Discord only, on a database in `dir`. Not started yet.
 */
export async function startDiscordRig(dir: string): Promise<DiscordChaosRig> {
  const anthropic = await new FakeAnthropic().start();
  const discord = await new FakeDiscord().start();
  const proxy = await new DiscordChaosProxy(new URL(discord.url).origin).start();
  const port = await freePort();
  const databasePath = join(dir, "parley.db");
  const logPath = join(dir, "bot.log");
  const toolRecordPath = join(dir, "tools.log");
  writeFileSync(toolRecordPath, "");
  const mcpConfigPath = join(dir, "mcp.json");
  const server = new URL("./chaos-tools-server.mjs", import.meta.url).pathname;
  const mcpServers = { ops: { command: process.execPath, args: [server], env: { CHAOS_TOOL_RECORD: toolRecordPath } } };
  writeFileSync(mcpConfigPath, JSON.stringify({ mcpServers }));
  const bot = new BotProcess(
    {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? dir,
      DISCORD_TOKEN: FAKE_DISCORD_TOKEN,
      DISCORD_APPLICATION_ID: discord.applicationId,
      DISCORD_API_URL: proxy.apiUrl,
      ANTHROPIC_BASE_URL: anthropic.url,
      ANTHROPIC_API_KEY: "sk-chaos-test",
      DATABASE_PATH: databasePath,
      PORT: String(port),
      HOST: "127.0.0.1",
      LOG_LEVEL: "warn",
      MCP_CONFIG: mcpConfigPath,
    },
    port,
    logPath,
  );
  const model = new ChaosModel(anthropic, () => bot.epoch);
  return {
    anthropic,
    discord,
    proxy,
    model,
    bot,
    databasePath,
    logPath,
    async startBot() {
      await bot.start();
      const started = Date.now();
      while (!(await ready(port))) {
        if (!bot.running) throw new Error(`bot epoch ${bot.epoch} exited before Discord was ready; see ${logPath}`);
        if (Date.now() - started > 30_000) throw new Error(`bot epoch ${bot.epoch}: Discord not ready in 30 s`);
        await sleep(25);
      }
    },
    toolRecords: () => readFileSync(toolRecordPath, "utf8").split("\n").filter(Boolean),
    async close() {
      await bot.kill();
      await proxy.close();
      await discord.close();
      await anthropic.close();
    },
  };
}

async function ready(port: number): Promise<boolean> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(1000) });
    await response.text();
    return response.ok;
  } catch {
    return false;
  }
}
