import { StoreError } from "../../src/ports/errors.js";

/** SQLSTATEs that mean "another transaction is in the way, try again": the engine treats them like SQLITE_BUSY. */
const BUSY_STATES = new Set([
  "40001", // serialization_failure
  "40P01", // deadlock_detected
  "55P03", // lock_not_available: lock_timeout or NOWAIT
  "57014", // query_canceled: statement_timeout
  "53300", // too_many_connections
]);
const FULL_STATES = new Set(["53100"]); // disk_full
/** Server going away or refusing sessions: admin_shutdown, crash_shutdown, cannot_connect_now. */
const UNAVAILABLE_STATES = new Set(["57P01", "57P02", "57P03"]);
/** Socket-level failures, reported by Node rather than by the server. */
const UNAVAILABLE_SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EPIPE"]);
/** pg and pg-pool report a dropped or timed-out connection with a plain Error and no code. */
const UNAVAILABLE_MESSAGES = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/;

/**
 * Turns a driver failure into a StoreError the engine understands, keeping the original as `cause`.
 * Messages name the SQLSTATE or socket code only: never the connection string, which may hold a password.
 * Anything else (a constraint violation, a bug in a statement) is returned unchanged.
 */
function translateError(error: unknown): unknown {
  if (error instanceof StoreError || !(error instanceof Error)) return error;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") {
    if (BUSY_STATES.has(code)) return new StoreError("storage-busy", `PostgreSQL is busy (SQLSTATE ${code})`, { cause: error });
    if (FULL_STATES.has(code))
      return new StoreError("storage-full", `PostgreSQL is out of disk space (SQLSTATE ${code})`, { cause: error });
    if (UNAVAILABLE_STATES.has(code) || code.startsWith("08")) {
      return new StoreError("storage-unavailable", `PostgreSQL is unavailable (SQLSTATE ${code})`, { cause: error });
    }
    if (UNAVAILABLE_SOCKET_CODES.has(code))
      return new StoreError("storage-unavailable", `PostgreSQL is unreachable (${code})`, { cause: error });
  }
  if (error instanceof AggregateError && error.errors.some((inner) => translateError(inner) instanceof StoreError)) {
    // Node reports a refused connection to a host with several addresses (localhost: ::1 and 127.0.0.1) this way.
    return new StoreError("storage-unavailable", "PostgreSQL is unreachable", { cause: error });
  }
  if (UNAVAILABLE_MESSAGES.test(error.message)) {
    return new StoreError("storage-unavailable", "PostgreSQL connection lost or timed out", { cause: error });
  }
  return error;
}

/** Runs `work` and rethrows its failure translated. */
export async function translated<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw translateError(error);
  }
}
