import type { Config } from "../src/config.js";
import { StartError, StoreError } from "../src/ports/errors.js";
import type { Storage } from "../src/ports/maintenance-store.js";
import { sqlitePathProblem } from "./sqlite-path-problem.js";
import { SqliteSessionStore } from "./sqlite-session-store.js";

/** PostgreSQL when DATABASE_URL says so (its driver loaded only then), else the SQLite file; both migrate on open. */
export async function openStorage(config: Pick<Config, "DATABASE_URL" | "DATABASE_PATH">): Promise<Storage> {
  if (config.DATABASE_URL) {
    const { PostgresSessionStore } = await import("./postgres/postgres-session-store.js");
    return PostgresSessionStore.open(config.DATABASE_URL);
  }
  return openSqlite(config.DATABASE_PATH);
}

/** The SQLite store, or a StartError naming DATABASE_PATH, the path and why it cannot be used. */
function openSqlite(path: string): SqliteSessionStore {
  const cannotUse = (reason: string, cause?: unknown) => new StartError(`cannot use DATABASE_PATH=${path}: ${reason}`, { cause });
  const problem = sqlitePathProblem(path);
  if (problem) throw cannotUse(problem);
  try {
    return new SqliteSessionStore(path);
  } catch (error) {
    throw cannotUse(openFailure(error), error);
  }
}

function openFailure(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "SQLITE_NOTADB") return "the file is not a SQLite database";
  if (code === "SQLITE_CORRUPT") return "the database file is damaged";
  if (typeof code === "string" && code.startsWith("SQLITE_READONLY")) return "SQLite cannot write there (read-only)";
  if (error instanceof StoreError) return error.message;
  return error instanceof Error ? error.message : String(error);
}
