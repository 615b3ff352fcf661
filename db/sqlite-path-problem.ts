import { accessSync, constants, existsSync, statSync } from "node:fs";
import { dirname, resolve, sep } from "node:path";

/** Kernel file systems: no database can live there, and Node's recursive mkdir under /proc never returns. */
const KERNEL_FILE_SYSTEMS = ["/proc", "/sys", "/dev"];

/**
 * Why the SQLite database cannot live at `path`, in words a person can act on, or undefined when it looks
 * usable. Checked before opening, since SQLite says only "unable to open database file" for most of these.
 */
export function sqlitePathProblem(path: string): string | undefined {
  if (path === ":memory:") return undefined;
  const absolute = resolve(path);
  const kernel = KERNEL_FILE_SYSTEMS.find((root) => absolute === root || absolute.startsWith(`${root}${sep}`));
  if (kernel) return `it is under ${kernel}, a kernel file system, where no database can be kept`;
  const folder = dirname(absolute);
  let existing = folder;
  while (!existsSync(existing)) existing = dirname(existing);
  if (!statSync(existing).isDirectory()) return `${existing} is a file, not a folder`;
  // SQLite in WAL mode writes its -wal and -shm files beside the database, so the folder must be writable too.
  if (!allowed(existing, constants.W_OK | constants.X_OK))
    return existing === folder ? `the folder ${folder} is not writable` : `cannot create ${folder}: ${existing} is not writable`;
  if (!existsSync(absolute)) return undefined;
  if (statSync(absolute).isDirectory()) return "it is a folder, not a file";
  if (!allowed(absolute, constants.R_OK | constants.W_OK)) return "the file is read-only";
  return undefined;
}

function allowed(path: string, mode: number): boolean {
  try {
    accessSync(path, mode);
    return true;
  } catch {
    return false;
  }
}
