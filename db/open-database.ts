import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { StoreError } from "../src/ports/errors.js";

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), "migrations");
/** How long a writer waits for another process's lock before SQLITE_BUSY reaches the caller. */
export const BUSY_TIMEOUT_MS = 5000;

/**
 * Opens the SQLite file in WAL mode and applies numbered migrations in order.
 * synchronous=NORMAL: in WAL a power loss can drop the last commits but never corrupts the file,
 * and it is about 3× the throughput of FULL on this kind of disk (see docs/storage.md).
 */
export function openDatabase(path: string, options: { busyTimeoutMs?: number } = {}): Database.Database {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? BUSY_TIMEOUT_MS}`);
  db.pragma("journal_mode = WAL");
  // Set explicitly: a connection that switched a fresh file to WAL would otherwise stay at FULL.
  db.pragma("synchronous = NORMAL");
  db.pragma("foreign_keys = ON");
  migrate(db);
  return db;
}

function migrate(db: Database.Database): void {
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((name) => /^\d{3}_.+\.sql$/.test(name))
    .sort();
  const current = db.pragma("user_version", { simple: true }) as number;
  if (current > files.length) {
    throw new StoreError(
      "schema-too-new",
      `database schema version ${current} is newer than this Parley (${files.length}); upgrade Parley`,
    );
  }
  for (const [index, name] of files.entries()) {
    const version = index + 1;
    if (version <= current) continue;
    const sql = readFileSync(join(MIGRATIONS_DIR, name), "utf8");
    db.transaction(() => {
      db.exec(sql);
      db.pragma(`user_version = ${version}`);
    }).immediate();
  }
}
