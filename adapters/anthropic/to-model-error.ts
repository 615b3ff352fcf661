import Anthropic from "@anthropic-ai/sdk";
import { ModelError } from "../../src/ports/errors.js";

/** Statuses worth another try later: timeouts, lock conflicts, rate limits, server errors, 529 overloaded. */
const TRANSIENT_STATUSES = new Set([408, 409, 429]);
/** Error types of an `event: error` in the middle of a stream (it has no status) that a later try can fix. */
const TRANSIENT_TYPES = new Set(["overloaded_error", "rate_limit_error", "api_error", "timeout_error"]);
/** What undici and Node say when a connection drops in the middle of a response. */
const DROPPED_CONNECTION = /terminated|socket|ECONNRESET|EPIPE|stream ended without producing/i;

/**
 * Translates what the SDK threw, once its own retries are spent, into the port's ModelError: transient or
 * permanent, with the provider's retry-after when it gave one. The retry policy itself lives in the core.
 */
export function toModelError(error: unknown): ModelError {
  if (error instanceof ModelError) return error;
  if (error instanceof Anthropic.APIUserAbortError) return new ModelError("cancelled", { kind: "permanent", cause: error });
  if (error instanceof Anthropic.APIConnectionTimeoutError) return new ModelError("timed out", { kind: "transient", cause: error });
  if (error instanceof Anthropic.APIConnectionError) return new ModelError("connection failed", { kind: "transient", cause: error });
  if (error instanceof Anthropic.APIError) return fromApiError(error);
  // A connection reset in the middle of an SSE stream reaches us as a bare AnthropicError ("terminated").
  if (error instanceof Error && isDroppedConnection(error)) return new ModelError("connection lost", { kind: "transient", cause: error });
  const detail = error instanceof Error ? error.message : String(error);
  return new ModelError("unexpected error in the model client", { kind: "permanent", detail, cause: error });
}

function fromApiError(error: InstanceType<typeof Anthropic.APIError>): ModelError {
  const { status } = error;
  const type = error.type ?? undefined;
  const detail =
    [type, error.apiMessage, error.requestID ? `request ${error.requestID}` : undefined].filter(Boolean).join(": ") || undefined;
  const retryAfterMs = retryAfter(error.headers);
  const transient = (reason: string) => new ModelError(reason, { kind: "transient", status, retryAfterMs, detail, cause: error });
  // An `event: error` frame after the stream began has no status, and the SDK does not retry it.
  if (status === undefined) {
    if (type === undefined || TRANSIENT_TYPES.has(type)) return transient(`${type ?? "error"} in the stream`);
    return new ModelError(`${type} in the stream`, { kind: "permanent", detail, cause: error });
  }
  if (status === 529) return transient("overloaded, 529");
  if (status === 429) return transient("rate limited, 429");
  if (status >= 500 || TRANSIENT_STATUSES.has(status)) return transient(`server error ${status}`);
  return new ModelError(`${status}${type ? ` ${type}` : ""}`, { kind: "permanent", status, detail, cause: error });
}

/** `retry-after-ms` (the Anthropic API's own), else `retry-after` in seconds or as an HTTP date. */
export function retryAfter(headers: Headers | undefined, now = Date.now()): number | undefined {
  const milliseconds = Number(headers?.get("retry-after-ms") ?? Number.NaN);
  if (Number.isFinite(milliseconds) && milliseconds >= 0) return milliseconds;
  const value = headers?.get("retry-after")?.trim();
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function isDroppedConnection(error: Error): boolean {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (DROPPED_CONNECTION.test(current.message) || (typeof code === "string" && DROPPED_CONNECTION.test(code))) return true;
  }
  return false;
}
