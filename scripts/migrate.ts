import { openStorage } from "../db/open-storage.js";
import { loadConfigPart } from "../src/config.js";
import { loadEnvFileIfPresent } from "../src/env-file.js";
import { ConfigError } from "../src/ports/errors.js";

/** `npm run migrate`: applies pending migrations to DATABASE_URL (or DATABASE_PATH) and exits, for deploys that migrate first. */
loadEnvFileIfPresent();
try {
  const config = loadConfigPart(process.env, ["DATABASE_URL", "DATABASE_PATH"]);
  // Opening a store migrates it, once across processes (an advisory lock on PostgreSQL, a write lock on SQLite).
  const store = await openStorage(config);
  await store.close();
  console.log(`migrated ${config.DATABASE_URL ? "the PostgreSQL database in DATABASE_URL" : config.DATABASE_PATH}`);
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : `migrate failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
