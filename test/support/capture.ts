import { readFileSync } from "node:fs";
import { Writable } from "node:stream";
import { createLogger, type Logger } from "../../src/logger.js";

/** A real pino logger at trace level whose every byte is kept, so a test can scan it for secrets. */
export class LogCapture {
  text = "";
  readonly logger: Logger = createLogger(
    "trace",
    new Writable({
      write: (chunk, _encoding, done) => {
        this.text += chunk.toString();
        done();
      },
    }),
  );
}

/** Every byte the SQLite store wrote: the database and its WAL, shared-memory and journal files. */
export function databaseBytes(path: string): Buffer {
  const parts: Buffer[] = [];
  for (const suffix of ["", "-wal", "-shm", "-journal"]) {
    try {
      parts.push(readFileSync(`${path}${suffix}`));
    } catch {
      // Not every file exists in every journal mode, or after a clean close.
    }
  }
  return Buffer.concat(parts);
}
