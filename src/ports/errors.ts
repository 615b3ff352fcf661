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

/** The model provider failed after the SDK's own retries (429, 5xx, 529, timeouts). */
export class ModelError extends ParleyError {
  constructor(
    message: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super("model-error", message, options);
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
