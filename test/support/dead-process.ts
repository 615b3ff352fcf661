import { spawnSync } from "node:child_process";
import { hostname } from "node:os";

/**
 * A lease or post-claim owner as a process that died on this host leaves it (see src/engine/turn-lease.ts): its pid
 * is gone, so a restarted process displaces it at once. A test that plays a crash in its own process writes this,
 * since the engine it restarts shares the test's pid and would count its predecessor alive.
 */
export function deadOwner(): string {
  return `${hostname()}:${spawnSync(process.execPath, ["-e", ""]).pid}:dead`;
}
