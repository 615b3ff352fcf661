import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FakeAnthropic } from "../fakes/fake-anthropic.js";
import { FAKE_BOT_TOKEN, FakeSlackApi } from "../fakes/fake-slack-api.js";
import { FAKE_SIGNING_SECRET, SlackRequestSender } from "../fakes/fake-slack-signer.js";
import { BotProcess, freePort } from "./bot-process.js";
import { ChaosModel } from "./chaos-model.js";
import { ADMIN, OWNER, STRANGER } from "./driver.js";
import { SlackChaosProxy } from "./slack-proxy.js";

export interface ChaosRig {
  anthropic: FakeAnthropic;
  slack: FakeSlackApi;
  proxy: SlackChaosProxy;
  model: ChaosModel;
  bot: BotProcess;
  sender: SlackRequestSender;
  port: number;
  databasePath: string;
  logPath: string;
  /** The lines the chaos MCP server recorded (`start deploy s3`, `done deploy s3`, …). */
  toolRecords(): string[];
  close(): Promise<void>;
}

/**
 * The fakes in this process (FakeAnthropic with the chaos model, FakeSlackApi behind the chaos proxy) and the
 * real bot as a child process pointed at them, on a database in `dir`. The bot is not started yet. `environment` adds
 * to the bot's variables (SLACK_APP_TOKEN for a Socket Mode run).
 */
export async function startRig(dir: string, environment: Record<string, string> = {}): Promise<ChaosRig> {
  const anthropic = await new FakeAnthropic().start();
  const slack = await new FakeSlackApi().start();
  slack.addUser({ id: OWNER, name: "alice" }).addUser({ id: STRANGER, name: "bob" }).addUser({ id: ADMIN, name: "carol", isAdmin: true });
  const proxy = await new SlackChaosProxy(slack.url).start();
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
      SLACK_BOT_TOKEN: FAKE_BOT_TOKEN,
      SLACK_SIGNING_SECRET: FAKE_SIGNING_SECRET,
      SLACK_API_URL: proxy.apiUrl,
      ANTHROPIC_BASE_URL: anthropic.url,
      ANTHROPIC_API_KEY: "sk-chaos-test",
      DATABASE_PATH: databasePath,
      PORT: String(port),
      HOST: "127.0.0.1",
      ADMIN_USER_IDS: ADMIN,
      LOG_LEVEL: "warn",
      MCP_CONFIG: mcpConfigPath,
      ...environment,
    },
    port,
    logPath,
  );
  const model = new ChaosModel(anthropic, () => bot.epoch);
  return {
    anthropic,
    slack,
    proxy,
    model,
    bot,
    sender: new SlackRequestSender(`http://127.0.0.1:${port}`),
    port,
    databasePath,
    logPath,
    toolRecords: () => readFileSync(toolRecordPath, "utf8").split("\n").filter(Boolean),
    async close() {
      await bot.kill();
      await proxy.close();
      await slack.close();
      await anthropic.close();
    },
  };
}
