import { type ChildProcess, spawn } from "node:child_process";
import { appendFileSync } from "node:fs";
import { createServer } from "node:net";
import { sleep } from "./slack-proxy.js";

/** A free TCP port on loopback (listen on 0, read it, close). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface ExitRecord {
  epoch: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** True when the bot exited without the test asking it to. */
  unexpected: boolean;
}

/**
 * The real bot (`node --import tsx src/main.ts`, as `npm start` runs it) as a child process that the test
 * kills with SIGKILL and starts again on the same port and database. Its output goes to a log file.
 */
export class BotProcess {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private expectingExit = false;
  readonly exits: ExitRecord[] = [];
  epoch = 0;

  constructor(
    private readonly environment: Record<string, string>,
    private readonly port: number,
    private readonly logPath: string,
    /** How long a start may take to answer /healthz. */
    private readonly startLimitMs = 30_000,
  ) {}

  get running(): boolean {
    return this.child !== undefined;
  }

  /** Running and answering /healthz (set by start(), cleared by kill, stop or exit). */
  healthy = false;

  /** Starts the bot and waits until /healthz answers; returns the new epoch number. */
  async start(): Promise<number> {
    if (this.child) throw new Error("bot already running");
    this.epoch++;
    const epoch = this.epoch;
    this.expectingExit = false;
    appendFileSync(this.logPath, `\n===== epoch ${epoch} start ${new Date().toISOString()}\n`);
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      env: this.environment,
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child = child;
    const log = (chunk: Buffer) => appendFileSync(this.logPath, chunk);
    child.stdout?.on("data", log);
    child.stderr?.on("data", log);
    this.exited = new Promise<void>((resolve) => {
      child.once("exit", (code, signal) => {
        this.exits.push({ epoch, code, signal, unexpected: !this.expectingExit });
        appendFileSync(this.logPath, `===== epoch ${epoch} exit code=${code} signal=${signal}\n`);
        if (this.child === child) {
          this.child = undefined;
          this.healthy = false;
        }
        resolve();
      });
    });
    const started = Date.now();
    for (;;) {
      if (this.child !== child) throw new Error(`bot epoch ${epoch} exited during start-up; see ${this.logPath}`);
      if (await healthy(this.port)) {
        this.healthy = true;
        return epoch;
      }
      if (Date.now() - started > this.startLimitMs) {
        throw new Error(`bot epoch ${epoch} did not become healthy in ${this.startLimitMs / 1000} s`);
      }
      await sleep(25);
    }
  }

  /** SIGKILL, then wait for the exit so the port and the database are free. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.expectingExit = true;
    this.healthy = false;
    child.kill("SIGKILL");
    await this.exited;
  }

  /** SIGTERM (graceful shutdown), falling back to SIGKILL after `graceMs`. Returns the exit code. */
  async stop(graceMs = 15_000): Promise<ExitRecord | undefined> {
    const child = this.child;
    if (!child) return undefined;
    this.expectingExit = true;
    this.healthy = false;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
    await this.exited;
    clearTimeout(timer);
    return this.exits.at(-1);
  }
}

async function healthy(port: number): Promise<boolean> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(1000) });
    await response.text();
    return response.ok;
  } catch {
    return false;
  }
}
