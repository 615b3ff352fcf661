import { describe, expect, it } from "vitest";
import { DEFAULT_RESTART_BACKOFF, restartDelayMs } from "../../adapters/mcp/restart-backoff.js";

describe("restartDelayMs", () => {
  it("starts at about a second, doubles, and never waits more than a minute", () => {
    const delays = Array.from({ length: 10 }, (_, attempt) => restartDelayMs(DEFAULT_RESTART_BACKOFF, attempt));
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000, 60_000]);
    expect(restartDelayMs(DEFAULT_RESTART_BACKOFF, 10_000)).toBe(60_000);
  });
});
