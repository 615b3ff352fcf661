import type { Config } from "../src/config.js";
import type { Storage } from "../src/ports/session-store.js";
import { SqliteSessionStore } from "./sqlite-session-store.js";

/** PostgreSQL when DATABASE_URL says so (its driver loaded only then), else the SQLite file; both migrate on open. */
export async function openStorage(config: Pick<Config, "DATABASE_URL" | "DATABASE_PATH">): Promise<Storage> {
  if (config.DATABASE_URL) {
    const { PostgresSessionStore } = await import("./postgres/postgres-session-store.js");
    return PostgresSessionStore.open(config.DATABASE_URL);
  }
  return new SqliteSessionStore(config.DATABASE_PATH);
}
