/** Infrastructure failures carry a string code; expected outcomes are unions, not errors. */
export class ParleyError extends Error {
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * How a model call failed, as the core needs to know it: `transient` (overloaded, rate limited, 5xx, a dropped
 * connection: worth another try later) or `permanent` (a request Parley built wrongly, a rejected key: trying
 * again changes nothing).
 */
export type ModelErrorKind = "transient" | "permanent";

export interface ModelErrorDetails {
  kind: ModelErrorKind;
  status?: number | undefined;
  /** How long the provider asked us to wait (retry-after), when it said. */
  retryAfterMs?: number | undefined;
  /** The provider's own words, for the log only: they may quote the request. */
  detail?: string | undefined;
  cause?: unknown;
}

/**
 * The model provider failed after the SDK's own retries. The message is a short reason a person may read
 * ("overloaded, 529"); it never holds the request, the provider's text or a key.
 */
export class ModelError extends ParleyError {
  readonly kind: ModelErrorKind;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  readonly detail: string | undefined;

  constructor(reason: string, details: ModelErrorDetails) {
    super(details.kind === "transient" ? "model-busy" : "model-refused", reason, { cause: details.cause });
    this.kind = details.kind;
    this.status = details.status;
    this.retryAfterMs = details.retryAfterMs;
    this.detail = details.detail;
  }
}

/** What went wrong in a store, as the core matches it; `db/` translates its drivers' own codes into these. */
export type StoreErrorCode =
  /** The disk is full. */
  | "storage-full"
  /** Another writer holds a lock, or the server is shedding load: worth another try. */
  | "storage-busy"
  /** The database cannot be written (permissions, a read-only file system). */
  | "storage-read-only"
  /** The database file is damaged, or is not SQLite. */
  | "storage-corrupt"
  /** The database failed or cannot be reached for another reason. */
  | "storage-unavailable"
  /** The database's schema is newer than this Parley's migrations. */
  | "schema-too-new"
  /** A stored row carries a schema version this Parley does not read. */
  | "unknown-schema-version"
  /** A stored row does not match its schema. */
  | "corrupt-row"
  /** A row about to be written does not match its schema; nothing was written. */
  | "invalid-row";

/**
 * The store failed: a driver error translated by `db/` (disk full, locked, read-only, damaged, unreachable), a
 * database newer than this Parley, or a row that cannot be read or would not be valid to write.
 */
export class StoreError extends ParleyError {
  declare readonly code: StoreErrorCode;

  constructor(code: StoreErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/** The environment is incomplete or wrong; the message names every bad variable. */
export class ConfigError extends ParleyError {
  constructor(message: string) {
    super("config-error", message);
  }
}

/** Parley cannot start as set up (a database path, a port, a token); the message is one line saying what to change. */
export class StartError extends ParleyError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("start-error", message, options);
  }
}

/** A platform would not take an ask from the API where it was sent (no such channel, no access): the caller can fix it. */
export class PlaceError extends ParleyError {
  constructor(message: string) {
    super("place-refused", message);
  }
}
