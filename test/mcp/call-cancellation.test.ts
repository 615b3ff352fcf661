import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callRequest, createTestProvider, scratch, testServer, waitFor } from "./mcp-harness.js";

const files = scratch();
const { provider } = createTestProvider({ test: testServer({ recordFile: files.recordFile }) }, { toolTimeoutMs: 1_000 });

beforeAll(() => provider.start());
afterAll(async () => {
  await provider.close();
  files.remove();
});

describe("timeouts, Stop and progress", () => {
  it("cancels a call silent past the timeout, on the server too, and tells the model", async () => {
    const started = Date.now();
    const output = await provider.call(callRequest("test__slow", { seconds: 3, silent: true }));
    expect(output).toEqual({ content: [{ type: "text", text: "tool test__slow timed out after 1 s and was cancelled" }], isError: true });
    expect(Date.now() - started).toBeLessThan(2_500);
    // The server saw notifications/cancelled: its handler's signal aborted.
    await waitFor(() => files.recorded().includes("slow cancelled"), 5_000, "the server to record the cancellation");
    expect(files.recorded()).not.toContain("slow finished");
  });

  it("cancels the call on the server when the caller's signal aborts (Stop)", async () => {
    const before = files.recorded().filter((line) => line === "slow cancelled").length;
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 300);
    const output = await provider.call(callRequest("test__slow", { seconds: 3 }, { signal: stop.signal }));
    expect(output).toEqual({ content: [{ type: "text", text: "tool test__slow was cancelled by a person" }], isError: true });
    await waitFor(() => files.recorded().filter((line) => line === "slow cancelled").length === before + 1, 5_000, "the cancellation");
  });

  it("does not send a call whose signal is already aborted", async () => {
    const stop = new AbortController();
    stop.abort();
    const output = await provider.call(callRequest("test__delete_record", { id: "never" }, { signal: stop.signal }));
    expect(output.isError).toBe(true);
    expect(files.recorded()).not.toContain("delete_record never");
  });

  it("passes progress as short lines", async () => {
    const lines: string[] = [];
    const output = await provider.call(callRequest("test__slow", { seconds: 0.5 }, { onProgress: (line) => lines.push(line) }));
    expect(output).toEqual({ content: [{ type: "text", text: "worked 0.5 s" }], isError: false });
    expect(lines.slice(0, 2)).toEqual(["1/5 step 1", "2/5 step 2"]);
    expect(lines.length).toBeGreaterThanOrEqual(3);
  });

  it("progress does not extend TOOL_TIMEOUT_S: a call still reporting progress is cancelled at it, on the server too", async () => {
    const before = files.recorded().filter((line) => line === "slow cancelled").length;
    const started = Date.now();
    const output = await provider.call(callRequest("test__slow", { seconds: 5 }));
    expect(output).toEqual({
      content: [{ type: "text", text: "tool test__slow timed out after 1 s and was cancelled" }],
      isError: true,
    });
    expect(Date.now() - started).toBeLessThan(2_500);
    await waitFor(() => files.recorded().filter((line) => line === "slow cancelled").length === before + 1, 5_000, "the cancellation");
  });
});
