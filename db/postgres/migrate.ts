import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { StoreError } from "../../src/ports/errors.js";
import { transaction } from "./postgres-pool.js";

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), "migrations");
/** First key of Parley's advisory locks ("Parl"), so they cannot collide with another application's. */
const ADVISORY_LOCK_CLASS = 0x5061726c;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The numbered SQL files, in order; a gap or a duplicate number is a packaging bug. */
export function loadMigrations(directory = MIGRATIONS_DIR): Migration[] {
  const migrations = readdirSync(directory)
    .filter((name) => /^\d{3}_.+\.sql$/.test(name))
    .sort()
    .map((name) => ({ version: Number(name.slice(0, 3)), name, sql: readFileSync(join(directory, name), "utf8") }));
  for (const [index, migration] of migrations.entries()) {
    if (migration.version !== index + 1) throw new Error(`migration ${migration.name} should be number ${index + 1}`);
  }
  return migrations;
}

/**
 * Applies the pending migrations in one transaction, under a transaction-scoped advisory lock keyed by the
 * schema: processes starting together queue on the lock, and each finds the work done by the first.
 * Returns the versions this call applied. A database already past this code's last migration is refused.
 */
export async function migrate(pool: pg.Pool, schema?: string, migrations = loadMigrations()): Promise<number[]> {
  return transaction(pool, async (client) => {
    await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [ADVISORY_LOCK_CLASS, `migrations:${schema ?? ""}`]);
    // Under the lock: concurrent CREATE ... IF NOT EXISTS can otherwise fail on the catalog's unique index.
    if (schema !== undefined) await client.query(`CREATE SCHEMA IF NOT EXISTS ${pg.escapeIdentifier(schema)}`);
    await client.query(
      "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)",
    );
    const { rows } = await client.query<{ version: number }>("SELECT COALESCE(MAX(version), 0) AS version FROM schema_migrations");
    const current = rows[0]?.version ?? 0;
    const latest = migrations.length;
    if (current > latest) {
      throw new StoreError("schema-too-new", `database schema version ${current} is newer than this Parley (${latest}); upgrade Parley`);
    }
    const applied: number[] = [];
    for (const migration of migrations.slice(current)) {
      await client.query(migration.sql);
      await client.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)", [
        migration.version,
        migration.name,
        Date.now(),
      ]);
      applied.push(migration.version);
    }
    return applied;
  });
}
