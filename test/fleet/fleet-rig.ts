import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { CI_SECRET } from "../api/api-client.js";
import { BotProcess, freePort } from "../chaos/bot-process.js";
import { FakeAnthropic, type RecordedRequest } from "../fakes/fake-anthropic.js";
import { FAKE_BOT_TOKEN, FAKE_BOT_USER_ID, FAKE_TEAM_ID, FakeSlackApi, type RecordedSlackCall } from "../fakes/fake-slack-api.js";
import { FAKE_SIGNING_SECRET, SlackRequestSender } from "../fakes/fake-slack-signer.js";
import { actionIdsOf } from "../slack/slack-harness.js";
import { messageEvent, tapCard } from "../slack/slack-payloads.js";
import { RoundRobinProxy } from "./round-robin-proxy.js";

export const DATABASE_URL = process.env.PARLEY_TEST_DATABASE_URL ?? "postgres://root@127.0.0.1:5432/test";
export const FLEET_CHANNEL = "C_FLEET";
export const ALICE = "U_ALICE";
export const BOB = "U_BOB";
export const CAROL_ADMIN = "U_CAROL";
export const LABELS = ["A", "B", "C"] as const;

/** One Parley process of the fleet: its own port and its own model key, so the fake model knows who called. */
export interface FleetBot {
  label: string;
  port: number;
  apiKey: string;
  process: BotProcess;
  logPath: string;
}

/** A card the fake Slack API saw posted. */
export interface SeenCard {
  askId: string;
  ts: string;
  thread: string;
  actionIds: string[];
  /** The blocks as posted, which hold its buttons ("Yes", "No", "Cancel"). */
  blocks: unknown;
}

let threadCounter = 0;

/**
 * Two or three real bots (`node --import tsx src/main.ts`, Bolt in Slack HTTP mode) on one PostgreSQL schema,
 * sharing one fake Slack API and one fake model; Slack's requests (and API calls) reach them through a
 * round-robin proxy, as through a load balancer.
 */
export class Fleet {
  readonly anthropic = new FakeAnthropic();
  readonly slack = new FakeSlackApi();
  readonly proxy: RoundRobinProxy;
  readonly bots: FleetBot[] = [];
  readonly schema = `parley_fleet_${randomBytes(6).toString("hex")}`;
  readonly dir = mkdtempSync(join(tmpdir(), "parley-fleet-"));
  /** Signed Slack requests, sent to the proxy. */
  readonly sender: SlackRequestSender;
  readonly db: pg.Client;
  private readonly admin = new pg.Client({ connectionString: DATABASE_URL });
  /** How long the last launch took, until every bot answered /healthz. */
  launchMs = 0;

  constructor() {
    this.proxy = new RoundRobinProxy(() => this.bots.map((bot) => bot.port));
    this.sender = new SlackRequestSender("http://proxy.invalid");
    this.db = new pg.Client({ connectionString: this.databaseUrl });
  }

  get databaseUrl(): string {
    return `${DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${this.schema}`)}`;
  }

  /** The fakes, the proxy and an empty schema; no bot yet. */
  async open(): Promise<this> {
    await this.anthropic.start();
    await this.slack.start();
    this.slack
      .addUser({ id: ALICE, name: "alice" })
      .addUser({ id: BOB, name: "bob" })
      .addUser({ id: CAROL_ADMIN, name: "carol", isAdmin: true });
    await this.proxy.start();
    Object.assign(this, { sender: new SlackRequestSender(this.proxy.url) });
    await this.admin.connect();
    await this.admin.query(`CREATE SCHEMA ${pg.escapeIdentifier(this.schema)}`);
    await this.db.connect();
    return this;
  }

  /** Starts `count` bots at the same moment and waits until every one answers /healthz. */
  async launch(count: number, extra: Record<string, string> = {}): Promise<FleetBot[]> {
    for (let index = 0; index < count; index++) {
      const label = LABELS[index] ?? `bot${index}`;
      const port = await freePort();
      const apiKey = `sk-fleet-${label}`;
      const logPath = join(this.dir, `bot-${label}.log`);
      const environment: Record<string, string> = {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? this.dir,
        SLACK_BOT_TOKEN: FAKE_BOT_TOKEN,
        SLACK_SIGNING_SECRET: FAKE_SIGNING_SECRET,
        SLACK_API_URL: this.slack.apiUrl,
        ANTHROPIC_BASE_URL: this.anthropic.url,
        ANTHROPIC_API_KEY: apiKey,
        DATABASE_URL: this.databaseUrl,
        PORT: String(port),
        HOST: "127.0.0.1",
        ADMIN_USER_IDS: CAROL_ADMIN,
        API_TOKENS: `ci:${CI_SECRET}`,
        LOG_LEVEL: "info",
        ...extra,
      };
      this.bots.push({ label, port, apiKey, process: new BotProcess(environment, port, logPath), logPath });
    }
    const started = Date.now();
    await Promise.all(this.bots.map((bot) => bot.process.start()));
    this.launchMs = Date.now() - started;
    return this.bots;
  }

  /** Kills every bot, closes the fakes, drops the schema; keeps the logs when `keepLogs`. */
  async close(keepLogs: boolean): Promise<void> {
    await Promise.all(this.bots.map((bot) => bot.process.kill()));
    await this.proxy.close();
    await this.slack.close();
    await this.anthropic.close();
    await this.db.end().catch(() => {});
    await this.admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(this.schema)} CASCADE`).catch(() => {});
    await this.admin.end().catch(() => {});
    if (!keepLogs) rmSync(this.dir, { recursive: true, force: true });
  }

  /** The last lines of every bot's log, for a failure message. */
  logs(lines = 40): string {
    return this.bots
      .map((bot) => {
        let text = "";
        try {
          text = readFileSync(bot.logPath, "utf8");
        } catch {
          text = "(no log)";
        }
        return `--- bot ${bot.label} (${bot.logPath})\n${text.split("\n").slice(-lines).join("\n")}`;
      })
      .join("\n");
  }

  async rows<Row extends pg.QueryResultRow>(sql: string, values: unknown[] = []): Promise<Row[]> {
    return (await this.db.query<Row>(sql, values)).rows;
  }

  /** Which bot sent a model request (each bot has its own API key). */
  botOf(request: RecordedRequest): string {
    const header = request.headers["x-api-key"] ?? request.headers.authorization;
    const key = typeof header === "string" ? header.replace(/^Bearer /, "") : undefined;
    return this.bots.find((bot) => bot.apiKey === key)?.label ?? `?${String(key)}`;
  }

  /** A new thread: a mention of the bot by `user`, sent through the proxy (to bot `to` when given). Returns the thread ts. */
  async mention(text: string, options: { to?: number; user?: string } = {}): Promise<string> {
    const ts = `1750000000.${String(++threadCounter).padStart(6, "0")}`;
    if (options.to !== undefined) this.proxy.sendNextTo(options.to);
    const event = messageEvent("app_mention", {
      user: options.user ?? ALICE,
      text: `<@${FAKE_BOT_USER_ID}> ${text}`,
      channel: FLEET_CHANNEL,
      ts,
    });
    const response = await this.sender.event(event, { teamId: FAKE_TEAM_ID, eventId: `Ev${ts}` });
    await response.text();
    if (!response.ok) throw new Error(`mention answered ${response.status}`);
    return ts;
  }

  /** A message in a thread that mentions the bot ("@Parley stop"), to bot `to`. */
  async threadMention(thread: string, text: string, options: { to?: number; user?: string } = {}): Promise<Response> {
    const ts = `1750000000.${String(++threadCounter).padStart(6, "0")}`;
    if (options.to !== undefined) this.proxy.sendNextTo(options.to);
    const event = messageEvent("app_mention", {
      user: options.user ?? ALICE,
      text: `<@${FAKE_BOT_USER_ID}> ${text}`,
      channel: FLEET_CHANNEL,
      ts,
      threadTs: thread,
    });
    return this.sender.event(event, { teamId: FAKE_TEAM_ID, eventId: `Ev${ts}` });
  }

  /** A tap on a card's button, by `user`; the proxy routes it (call `proxy.sendNextTo` first to aim it). */
  tap(card: SeenCard, label: string, user = ALICE): Promise<Response> {
    const responseUrl = `${this.slack.url}/respond/${card.askId}-${user}`;
    return tapCard(this.sender, { card, thread: card.thread, user, button: label, channel: FLEET_CHANNEL, responseUrl });
  }

  /** Every card posted (a chat.postMessage carrying an ask's controls). */
  cards(thread?: string): SeenCard[] {
    return this.slack.calls
      .filter((call) => call.method === "chat.postMessage" && call.ok && (thread === undefined || call.params.thread_ts === thread))
      .flatMap((call) => {
        const ids = actionIdsOf(call.params.blocks).filter((id) => id.startsWith("ask:"));
        const askId = ids[0]?.split(":")[1];
        if (!askId) return [];
        return [{ askId, ts: String(call.result.ts), thread: String(call.params.thread_ts), actionIds: ids, blocks: call.params.blocks }];
      });
  }

  /** chat.update calls that took a card's controls away (its settle). */
  settles(card: SeenCard): RecordedSlackCall[] {
    return this.slack.calls.filter(
      (call) =>
        call.method === "chat.update" &&
        call.ok &&
        call.params.ts === card.ts &&
        !actionIdsOf(call.params.blocks).some((id) => id.startsWith(`ask:${card.askId}:`)),
    );
  }

  /** Messages posted in a thread (chat.postMessage), oldest first. */
  posts(thread: string): RecordedSlackCall[] {
    return this.slack.calls.filter((call) => call.method === "chat.postMessage" && call.ok && call.params.thread_ts === thread);
  }

  /** Ephemeral notices to a user. */
  ephemerals(user: string): string[] {
    return this.slack.calls
      .filter((call) => call.method === "chat.postEphemeral" && call.ok && call.params.user === user)
      .map((call) => String(call.params.text));
  }

  /** Model requests that delivered the tool_result of `toolUseId` first-hand (in their newest message). */
  resumesOf(toolUseId: string): RecordedRequest[] {
    return this.anthropic.requests.filter((request) => {
      const last = request.body.messages.at(-1);
      return (
        last !== undefined &&
        typeof last.content !== "string" &&
        last.content.some((block) => block.type === "tool_result" && block.tool_use_id === toolUseId)
      );
    });
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls until `condition` holds (sync or async); fails naming `what`. Synchronisation only. */
export async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}
