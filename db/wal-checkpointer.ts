import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type Database from "better-sqlite3";
import type { Logger } from "../src/ports/logger.js";

/** How often the worker copies the WAL back into the database file; a check with nothing to copy costs microseconds. */
export const CHECKPOINT_EVERY_MS = 250;
/**
 * SQLite's own checkpoint on commit stays on as a backstop, far above what the worker lets the WAL reach: it fires
 * only if the worker has died or falls behind (10,000 pages, about 40 MB).
 */
export const BACKSTOP_PAGES = 10_000;

// Plain JavaScript run by the worker: it needs no TypeScript loader, under `node`, `tsx` or a test runner alike.
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
// PASSIVE never waits for readers or writers: the main thread's commits are never held up by it.
db.pragma("busy_timeout = 0");
const checkpoint = () => {
  try { db.pragma("wal_checkpoint(PASSIVE)"); } catch { /* another connection is checkpointing: next time */ }
};
const timer = setInterval(checkpoint, workerData.everyMs);
parentPort.on("message", () => {
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort.close();
});
`;

/**
 * Checkpoints the WAL from a worker thread on its own connection, so no commit on the main thread pays for copying
 * a thousand pages and an fsync (about 15 ms, 1.5 % of resumes, the whole p99 before this).
 */
export class WalCheckpointer {
  private readonly worker: Worker;
  private readonly exited: Promise<void>;

  constructor(db: Database.Database, path: string, logger?: Logger) {
    db.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
    const driver = createRequire(import.meta.url).resolve("better-sqlite3");
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, path, everyMs: CHECKPOINT_EVERY_MS } });
    this.worker.unref();
    this.exited = new Promise((resolve) => this.worker.once("exit", () => resolve()));
    this.worker.on("error", (error) => {
      // Without the worker, SQLite's own checkpoint on commit takes over at its usual size.
      if (db.open) db.pragma("wal_autocheckpoint = 1000");
      logger?.warn({ err: error }, "wal-checkpointer stopped; checkpoints run on commit");
    });
  }

  /** Runs a last checkpoint, closes the worker's connection and waits for the thread to end. */
  async stop(): Promise<void> {
    // Held while it ends: an unreferenced thread would let the process exit with this wait unsettled.
    this.worker.ref();
    this.worker.postMessage("stop");
    await this.exited;
  }
}
