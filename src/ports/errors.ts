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

/** A stored row could not be read as this version of Parley understands it. */
export class StoreError extends ParleyError {}

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
