import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { retryAfter, toModelError } from "../../adapters/anthropic/to-model-error.js";
import { loadConfig } from "../../src/config.js";
import { FIRST_RETRY_DELAY_MS, MAX_RETRY_DELAY_MS, nextDelay } from "../../src/loop/call-model.js";

const apiError = (status: number | undefined, type: string, headers: Record<string, string> = {}) =>
  Anthropic.APIError.generate(status, { type: "error", error: { type, message: `the ${type}` } }, undefined, new Headers(headers));

describe("toModelError: what the SDK threw, as the core needs it", () => {
  it.each([
    [529, "overloaded_error", "overloaded, 529"],
    [429, "rate_limit_error", "rate limited, 429"],
    [500, "api_error", "server error 500"],
    [503, "api_error", "server error 503"],
    [408, "timeout_error", "server error 408"],
  ])("%i is transient (%s)", (status, type, reason) => {
    const error = toModelError(apiError(status, type));
    expect(error).toMatchObject({ kind: "transient", status, message: reason, code: "model-busy" });
  });

  it.each([
    [400, "invalid_request_error"],
    [401, "authentication_error"],
    [403, "permission_error"],
    [404, "not_found_error"],
    [413, "request_too_large"],
  ])("%i is permanent, with the provider's words kept for the log only", (status, type) => {
    const error = toModelError(apiError(status, type));
    expect(error).toMatchObject({ kind: "permanent", status, message: `${status} ${type}`, code: "model-refused" });
    expect(error.message).not.toContain(`the ${type}`);
    expect(error.detail).toContain(`the ${type}`);
  });

  it("an error event in the middle of a stream is transient when the API is busy, permanent when the request is wrong", () => {
    // How the SDK builds it from an `event: error` frame: no status.
    const streamError = (type: string) =>
      new Anthropic.APIError(undefined, { type: "error", error: { type, message: "m" } }, undefined, new Headers());
    expect(toModelError(streamError("overloaded_error"))).toMatchObject({ kind: "transient" });
    expect(toModelError(streamError("invalid_request_error"))).toMatchObject({ kind: "permanent" });
  });

  it("connection failures and a reset mid-stream are transient; a bug is permanent", () => {
    expect(toModelError(new Anthropic.APIConnectionError({ message: "refused" }))).toMatchObject({ kind: "transient" });
    expect(toModelError(new Anthropic.APIConnectionTimeoutError())).toMatchObject({ kind: "transient", message: "timed out" });
    const reset = new Anthropic.AnthropicError("terminated", { cause: new TypeError("terminated") });
    expect(toModelError(reset)).toMatchObject({ kind: "transient", message: "connection lost" });
    expect(toModelError(new TypeError("Cannot read properties of undefined"))).toMatchObject({ kind: "permanent" });
  });

  it("keeps the API's retry-after on a 429", () => {
    expect(toModelError(apiError(429, "rate_limit_error", { "retry-after": "12" })).retryAfterMs).toBe(12_000);
  });
});

describe("retryAfter", () => {
  it("reads retry-after-ms first, then retry-after in seconds or as an HTTP date", () => {
    const now = Date.UTC(2026, 11, 1, 12);
    expect(retryAfter(new Headers({ "retry-after-ms": "1500", "retry-after": "9" }), now)).toBe(1500);
    expect(retryAfter(new Headers({ "retry-after": "9" }), now)).toBe(9000);
    expect(retryAfter(new Headers({ "retry-after": new Date(now + 30_000).toUTCString() }), now)).toBe(30_000);
    expect(retryAfter(new Headers({ "retry-after": "soon" }), now)).toBeUndefined();
    expect(retryAfter(new Headers(), now)).toBeUndefined();
    expect(retryAfter(undefined, now)).toBeUndefined();
  });
});

describe("nextDelay", () => {
  it("doubles from 5 s to at most 60 s, within ±20 %", () => {
    const middle = () => 0.5;
    expect([1, 2, 3, 4, 5, 6, 9].map((attempt) => nextDelay(attempt, undefined, middle))).toEqual([
      5000, 10_000, 20_000, 40_000, 60_000, 60_000, 60_000,
    ]);
    expect(nextDelay(1, undefined, () => 0)).toBe(FIRST_RETRY_DELAY_MS * 0.8);
    expect(nextDelay(9, undefined, () => 0.999_999)).toBeLessThanOrEqual(MAX_RETRY_DELAY_MS * 1.2);
  });

  it("waits what the API asked for, and never less than a second", () => {
    expect(nextDelay(1, 17_000, () => 0)).toBe(17_000);
    expect(nextDelay(5, 200, () => 0)).toBe(1000);
  });
});

describe("MODEL_RETRY_MAX_S", () => {
  it("defaults to 300 and accepts 0 to 3600 seconds", () => {
    expect(loadConfig({ ANTHROPIC_API_KEY: "k" }).MODEL_RETRY_MAX_S).toBe(300);
    expect(loadConfig({ ANTHROPIC_API_KEY: "k", MODEL_RETRY_MAX_S: "0" }).MODEL_RETRY_MAX_S).toBe(0);
    expect(() => loadConfig({ ANTHROPIC_API_KEY: "k", MODEL_RETRY_MAX_S: "a while" })).toThrow(/MODEL_RETRY_MAX_S/);
    expect(() => loadConfig({ ANTHROPIC_API_KEY: "k", MODEL_RETRY_MAX_S: "7200" })).toThrow(/MODEL_RETRY_MAX_S/);
  });
});
