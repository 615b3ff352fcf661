import { Worker } from "node:worker_threads";
import type { Logger } from "../../src/ports/logger.js";

export interface AckFrontOptions {
  host: string;
  port: number;
  /** The loopback port of the main thread's listener (Bolt, the API, /healthz). */
  innerPort: number;
  /** Where Slack posts events, taps and commands. */
  path: string;
  signingSecret: string;
  /** A body above this is never buffered by the front: it goes on to the main thread, which refuses it. */
  limitBytes: number;
  logger: Logger;
}

type FrontMessage =
  | { kind: "listening"; port: number }
  | { kind: "error"; code?: string; message: string }
  /** A tap acknowledged to Slack that could not be handed to the main thread after every attempt. */
  | { kind: "lost"; code?: string };

/**
 * The public HTTP listener in HTTP mode, on a thread of its own (`ack-front.mjs`): taps and slash commands are
 * acknowledged there, so a main thread busy with resumes cannot delay an ack; everything else is passed through.
 */
export class AckFront {
  private constructor(
    private worker: Worker,
    readonly port: number,
    private readonly options: AckFrontOptions,
  ) {}

  /** Listens on `host:port`; a failure to bind rejects with Node's error (its `code`, EADDRINUSE and the like). */
  static async start(options: AckFrontOptions): Promise<AckFront> {
    const { worker, port } = await listen(options, options.port);
    const front = new AckFront(worker, port, options);
    front.watch();
    return front;
  }

  /** Stops taking connections and waits for the requests in flight to be answered. */
  async close(): Promise<void> {
    const worker = this.worker;
    worker.removeAllListeners("exit");
    const exited = new Promise((resolve) => worker.once("exit", resolve));
    worker.postMessage("close");
    await exited;
  }

  /** A front that died (it should not) is started again on the same port: without it the bot hears nothing. */
  private watch(): void {
    this.worker.on("message", (message: FrontMessage) => {
      if (message.kind === "lost")
        this.options.logger.error({ code: message.code }, "slack-tap lost: acknowledged, but Bolt's listener refused it");
    });
    this.worker.once("exit", (code) => {
      this.options.logger.error({ code }, "slack-ack-front stopped; starting it again");
      listen(this.options, this.port).then(
        ({ worker }) => {
          this.worker = worker;
          this.watch();
        },
        (error: unknown) => this.options.logger.error({ err: error }, "slack-ack-front could not listen again"),
      );
    });
  }
}

function listen(options: AckFrontOptions, port: number): Promise<{ worker: Worker; port: number }> {
  const { logger: _, ...data } = options;
  const worker = new Worker(new URL("./ack-front.mjs", import.meta.url), { workerData: { ...data, port } });
  return new Promise((resolve, reject) => {
    worker.once("message", (message: FrontMessage) => {
      if (message.kind === "listening") return resolve({ worker, port: message.port });
      void worker.terminate();
      const text = message.kind === "error" ? message.message : "the front stopped before it listened";
      reject(Object.assign(new Error(text), { code: message.code }));
    });
    worker.once("error", reject);
  });
}
