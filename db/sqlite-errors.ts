import { StoreError } from "../src/ports/errors.js";

/** better-sqlite3's error codes, translated into the core's StoreError codes; other errors pass through. */
export function toStoreError(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string" || !code.startsWith("SQLITE_")) return error;
  const message = error instanceof Error ? error.message : code;
  if (code === "SQLITE_FULL") return new StoreError("storage-full", `the database disk is full (${message})`, { cause: error });
  if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"))
    return new StoreError("storage-busy", `the database is locked by another writer (${message})`, { cause: error });
  if (code.startsWith("SQLITE_READONLY"))
    return new StoreError("storage-read-only", `the database cannot be written (${message})`, { cause: error });
  if (code === "SQLITE_CORRUPT" || code === "SQLITE_NOTADB")
    return new StoreError("storage-corrupt", `the database file is damaged or not SQLite (${message})`, { cause: error });
  return new StoreError("storage-unavailable", `the database failed (${message})`, { cause: error });
}

/**
 * Wraps every async method of a store class so driver errors leave it as StoreError: the core matches codes,
 * never a driver's strings. Done once on the prototype, so the hot path pays only a try/catch.
 */
export function translateStoreErrors(prototype: object): void {
  for (const name of Object.getOwnPropertyNames(prototype)) {
    const descriptor = Object.getOwnPropertyDescriptor(prototype, name);
    const method = descriptor?.value as unknown;
    if (name === "constructor" || typeof method !== "function") continue;
    const original = method as (...args: unknown[]) => Promise<unknown>;
    Object.defineProperty(prototype, name, {
      ...descriptor,
      value: async function (this: unknown, ...args: unknown[]) {
        try {
          return await original.apply(this, args);
        } catch (error) {
          throw toStoreError(error);
        }
      },
    });
  }
}
