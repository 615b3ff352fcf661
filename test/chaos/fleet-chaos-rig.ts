import { randomBytes } from "node:crypto";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { FakeAnthropic, type RecordedRequest } from "../fakes/fake-anthropic.js";
import { FAKE_BOT_TOKEN, FakeSlackApi } from "../fakes/fake-slack-api.js";
import { FAKE_SIGNING_SECRET, SlackRequestSender } from "../fakes/fake-slack-signer.js";
import { DATABASE_URL } from "../fleet/fleet-rig.js";
import { RoundRobinProxy } from "../fleet/round-robin-proxy.js";
import { BotProcess, type ExitRecord, freePort } from "./bot-process.js";
import { ChaosModel } from "./chaos-model.js";
import { ADMIN, OWNER, STRANGER } from "./driver.js";
import { SlackChaosProxy, type SlackTrap } from "./slack-proxy.js";

/** A start on a busy 2-core machine (others' tests, two more bots running) can take 20 s and more. */
const START_LIMIT_MS = 90_000;

/** One run of one process: a life ends when the test kills or stops it. */
export interface ProcessLife {
  /** Numbered across the fleet (1, 2, …): the model key `sk-chaos-<life>` names it in every model request. */
  life: number;
  member: string;
  startedAt: number;
  /** When it first answered /healthz. */
  healthyAt?: number;
  /** When the test sent SIGKILL or SIGTERM; the process sends nothing after. */
  endedAt?: number;
}

/** A Web API call as a member's chaos proxy logged it. */
export type SlackCallByMember = SlackChaosProxy["log"][number] & { member: string };

/**
 * One place in the fleet (A, B, C): a port behind the load balancer, its own chaos proxy to Slack (so a held call
 * names the process that made it) and its own tool record; the process in it is killed and started again.
 */
export class FleetMember {
  process: BotProcess | undefined;
  life: ProcessLife | undefined;
  /** Set while a start is under way; never rejects (the promise `start` returns does). */
  starting: Promise<void> | undefined;
  readonly exits: ExitRecord[] = [];
  kills = 0;

  constructor(
    readonly label: string,
    readonly port: number,
    readonly slackProxy: SlackChaosProxy,
    readonly toolRecordPath: string,
    readonly logPath: string,
    private readonly environment: Record<string, string>,
  ) {}

  get healthy(): boolean {
    return this.process?.healthy ?? false;
  }

  /** Starts a new life of this member; resolves once it answers /healthz. */
  start(life: ProcessLife): Promise<void> {
    const environment = { ...this.environment, ANTHROPIC_API_KEY: `sk-chaos-${life.life}` };
    const bot = new BotProcess(environment, this.port, this.logPath, START_LIMIT_MS);
    this.process = bot;
    this.life = life;
    appendFileSync(this.logPath, `\n===== life ${life.life} (member ${this.label})\n`);
    const started = bot.start().then(() => undefined);
    const starting: Promise<void> = started
      .catch(() => {})
      .finally(() => {
        if (this.starting === starting) this.starting = undefined;
      });
    this.starting = starting;
    return started;
  }

  /** SIGKILL; resolves once the process is gone. */
  async kill(): Promise<void> {
    const bot = this.process;
    if (!bot) return;
    if (this.life) this.life.endedAt = Date.now();
    this.kills++;
    await bot.kill();
    this.exits.push(...bot.exits);
    this.process = undefined;
  }

  /** SIGTERM (graceful), after any start under way. */
  async stop(): Promise<ExitRecord | undefined> {
    await this.starting;
    const bot = this.process;
    if (!bot) return undefined;
    if (this.life) this.life.endedAt = Date.now();
    const exit = await bot.stop();
    this.exits.push(...bot.exits);
    this.process = undefined;
    return exit;
  }
}

/**
 * The crash suite's fleet: two or three real bots (`node --import tsx src/main.ts`) on one fresh PostgreSQL schema,
 * Slack's requests reaching them through a round-robin balancer that skips processes not answering /healthz (as a
 * load balancer's health check would), each process calling the one fake Slack API through its own chaos proxy, and
 * the fake model (ChaosModel) telling processes apart by their model key. Nothing runs until `startMember`.
 */
export class FleetChaosRig {
  readonly anthropic = new FakeAnthropic();
  readonly slack = new FakeSlackApi();
  readonly model: ChaosModel;
  readonly members: FleetMember[] = [];
  readonly lives: ProcessLife[] = [];
  readonly balancer: RoundRobinProxy;
  readonly schema = `parley_chaos_${randomBytes(6).toString("hex")}`;
  sender = new SlackRequestSender("http://balancer.invalid");
  /** The ports the balancer chose from for each routed request, by its index in `balancer.routed`. */
  private readonly routedFrom: number[][] = [];
  private readonly admin = new pg.Client({ connectionString: DATABASE_URL });

  constructor(
    private readonly dir: string,
    private readonly size: number,
  ) {
    this.balancer = new RoundRobinProxy(() => {
      const healthy = this.members.filter((member) => member.healthy).map((member) => member.port);
      const ports = healthy.length > 0 ? healthy : this.members.map((member) => member.port);
      // The balancer picks from this list synchronously as the request arrives, before it records the request.
      this.routedFrom[this.balancer.routed.length] = ports;
      return ports;
    });
    // ChaosModel asks for the process while it answers the request the fake has just recorded (synchronously).
    this.model = new ChaosModel(this.anthropic, () => this.lifeOf(this.anthropic.requests.at(-1)));
  }

  get databaseUrl(): string {
    return `${DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${this.schema}`)}`;
  }

  /** The fakes, the balancer, the members' proxies and an empty schema. */
  async open(): Promise<this> {
    await this.anthropic.start();
    await this.slack.start();
    this.slack
      .addUser({ id: OWNER, name: "alice" })
      .addUser({ id: STRANGER, name: "bob" })
      .addUser({ id: ADMIN, name: "carol", isAdmin: true });
    await this.balancer.start();
    this.sender = new SlackRequestSender(this.balancer.url);
    await this.admin.connect();
    await this.admin.query(`CREATE SCHEMA ${pg.escapeIdentifier(this.schema)}`);
    const server = new URL("./chaos-tools-server.mjs", import.meta.url).pathname;
    for (let index = 0; index < this.size; index++) {
      const label = String.fromCharCode(65 + index);
      const slackProxy = await new SlackChaosProxy(this.slack.url).start();
      const port = await freePort();
      const toolRecordPath = join(this.dir, `tools-${label}.log`);
      writeFileSync(toolRecordPath, "");
      const mcpConfigPath = join(this.dir, `mcp-${label}.json`);
      const mcpServers = { ops: { command: process.execPath, args: [server], env: { CHAOS_TOOL_RECORD: toolRecordPath } } };
      writeFileSync(mcpConfigPath, JSON.stringify({ mcpServers }));
      const environment = {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? this.dir,
        SLACK_BOT_TOKEN: FAKE_BOT_TOKEN,
        SLACK_SIGNING_SECRET: FAKE_SIGNING_SECRET,
        SLACK_API_URL: slackProxy.apiUrl,
        ANTHROPIC_BASE_URL: this.anthropic.url,
        DATABASE_URL: this.databaseUrl,
        PORT: String(port),
        HOST: "127.0.0.1",
        ADMIN_USER_IDS: ADMIN,
        LOG_LEVEL: process.env.CHAOS_LOG_LEVEL ?? "warn",
        MCP_CONFIG: mcpConfigPath,
      };
      this.members.push(new FleetMember(label, port, slackProxy, toolRecordPath, join(this.dir, `bot-${label}.log`), environment));
    }
    return this;
  }

  /** Starts a new life of `member`. */
  startMember(member: FleetMember): Promise<void> {
    const life: ProcessLife = { life: this.lives.length + 1, member: member.label, startedAt: Date.now() };
    this.lives.push(life);
    return member.start(life).then(() => {
      life.healthyAt = Date.now();
    });
  }

  /** The process life that sent a model request (by its key), or -1. */
  lifeOf(request: RecordedRequest | undefined): number {
    const key = request?.headers["x-api-key"] ?? request?.headers.authorization;
    const life = typeof key === "string" ? /^(?:Bearer )?sk-chaos-(\d+)$/.exec(key)?.[1] : undefined;
    return life === undefined ? -1 : Number(life);
  }

  memberOfLife(life: number): FleetMember | undefined {
    const label = this.lives[life - 1]?.member;
    return this.members.find((member) => member.label === label);
  }

  /** The member that served the balancer's newest request answered 200 (the one that acknowledged a tap just now). */
  latestAcknowledger(): FleetMember | undefined {
    const routed = this.balancer.routed;
    for (let index = routed.length - 1; index >= 0; index--) {
      const entry = routed[index];
      if (entry?.status !== 200) continue;
      const port = this.routedFrom[index]?.[entry.target];
      return this.members.find((member) => member.port === port);
    }
    return undefined;
  }

  /** Requests the balancer sent to each member. */
  routedPerMember(): Record<string, number> {
    const counts: Record<string, number> = {};
    this.balancer.routed.forEach((entry, index) => {
      const port = this.routedFrom[index]?.[entry.target];
      const label = this.members.find((member) => member.port === port)?.label ?? "?";
      counts[label] = (counts[label] ?? 0) + 1;
    });
    return counts;
  }

  /** Arms the same trap on every member's Slack proxy; the first hit disarms the others and names its member. */
  armSlack(trap: Omit<SlackTrap, "onHit">, onHit: (member: FleetMember, call: Parameters<SlackTrap["onHit"]>[0]) => void): void {
    for (const member of this.members) {
      member.slackProxy.arm({
        ...trap,
        onHit: (call) => {
          for (const other of this.members) if (other !== member) other.slackProxy.disarm();
          onHit(member, call);
        },
      });
    }
  }

  disarmSlack(): void {
    for (const member of this.members) member.slackProxy.disarm();
  }

  /** Every member's proxy log, in arrival order, each call named by the member that made it. */
  slackLog(): SlackCallByMember[] {
    return this.members
      .flatMap((member) => member.slackProxy.log.map((entry) => ({ ...entry, member: member.label })))
      .sort((left, right) => left.at - right.at);
  }

  /** The lines every member's chaos MCP server recorded. */
  toolRecords(): string[] {
    return this.members.flatMap((member) => readFileSync(member.toolRecordPath, "utf8").split("\n").filter(Boolean));
  }

  /** The `start` lines of one member's tool record. */
  toolStarts(member: FleetMember): number {
    return readFileSync(member.toolRecordPath, "utf8")
      .split("\n")
      .filter((line) => line.startsWith("start ")).length;
  }

  /** Kills every process, closes the fakes and drops the schema (kept with `keepSchema`). */
  async close(keepSchema: boolean): Promise<void> {
    await Promise.all(this.members.map((member) => member.starting));
    await Promise.all(this.members.map((member) => member.kill()));
    await this.balancer.close();
    for (const member of this.members) await member.slackProxy.close();
    await this.slack.close();
    await this.anthropic.close();
    if (!keepSchema) await this.admin.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(this.schema)} CASCADE`).catch(() => {});
    await this.admin.end().catch(() => {});
  }
}
