import { existsSync } from "node:fs";

/**
 * Loads `.env` when there is one, silently when there is not (Node's `--env-file-if-exists` prints a line on
 * every start). Variables already in the environment win over the file.
 */
export function loadEnvFileIfPresent(path = ".env"): void {
  if (existsSync(path)) process.loadEnvFile(path);
}
