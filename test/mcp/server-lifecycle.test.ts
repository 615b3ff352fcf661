import { afterEach, describe, expect, it } from "vitest";
import type { McpToolProvider } from "../../adapters/mcp/mcp-tool-provider.js";
import { callRequest, createTestProvider, isAlive, scratch, testServer, textOf, waitFor } from "./mcp-harness.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function closeLater(provider: McpToolProvider): void {
  cleanups.push(() => provider.close());
}

function pidsOf(recorded: string[]): number[] {
  return recorded.filter((line) => line.startsWith("started ")).map((line) => Number(line.slice("started ".length)));
}

describe("servers starting, dying and coming back", () => {
  it("a server that cannot start is failed with a one-line detail, while the others work", async () => {
    const files = scratch();
    cleanups.push(files.remove);
    const servers = {
      good: testServer({ recordFile: files.recordFile }),
      missing: { type: "stdio" as const, command: "/nonexistent/parley-mcp-server", args: [], env: { TOKEN: "sk-do-not-print" } },
    };
    const { provider, logger } = createTestProvider(servers);
    closeLater(provider);
    await provider.start();
    const [good, missing] = provider.status();
    expect(good).toEqual({ name: "good", state: "ready", toolCount: 12 });
    expect(missing).toMatchObject({ name: "missing", state: "failed", toolCount: 0 });
    expect(missing?.detail).toMatch(/ENOENT.*; next try in 1 s$/);
    expect(provider.list().every((tool) => tool.server === "good")).toBe(true);
    expect(textOf(await provider.call(callRequest("good__lookup", { key: "a" })))).toBe("value of a");
    expect(logger.lines).toContainEqual(expect.objectContaining({ level: "warn", object: expect.objectContaining({ server: "missing" }) }));
    expect(JSON.stringify(logger.lines)).not.toContain("sk-do-not-print");
  });

  it("a server that exits before speaking MCP is retried with backoff", async () => {
    const files = scratch();
    cleanups.push(files.remove);
    const servers = { flaky: testServer({ recordFile: files.recordFile, crashOnStart: true }) };
    const { provider, logger } = createTestProvider(servers, { restartBackoff: { initialDelayMs: 50, maxDelayMs: 100 } });
    closeLater(provider);
    await provider.start();
    expect(provider.status()[0]).toMatchObject({ state: "failed" });
    await waitFor(() => logger.lines.filter((line) => line.message === "mcp server failed").length >= 2, 15_000, "a second attempt");
    expect(provider.status()[0]).toMatchObject({ state: "failed", toolCount: 0 });
  });

  it("a crash in the middle of a call is an isError result; the server restarts and lists its tools again", async () => {
    const files = scratch();
    cleanups.push(files.remove);
    const servers = { test: testServer({ recordFile: files.recordFile }) };
    const { provider } = createTestProvider(servers, { restartBackoff: { initialDelayMs: 300, maxDelayMs: 300 } });
    closeLater(provider);
    await provider.start();
    let changes = 0;
    provider.onToolsChanged(() => {
      changes += 1;
    });
    const output = await provider.call(callRequest("test__crash"));
    expect(output).toEqual({
      content: [{ type: "text", text: "server test stopped during the call to test__crash; the call may or may not have taken effect" }],
      isError: true,
    });
    expect(provider.status()[0]).toMatchObject({ state: "failed", toolCount: 0 });
    expect(provider.list()).toEqual([]);
    const refused = await provider.call(callRequest("test__lookup", { key: "a" }));
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^server test is not ready \(failed: .*\); tool test__lookup was not run$/);

    await waitFor(() => provider.status()[0]?.state === "ready", 10_000, "the restart");
    expect(provider.status()[0]).toEqual({ name: "test", state: "ready", toolCount: 12 });
    expect(provider.list()).toHaveLength(12);
    expect(changes).toBe(2);
    expect(textOf(await provider.call(callRequest("test__lookup", { key: "b" })))).toBe("value of b");
    expect(pidsOf(files.recorded())).toHaveLength(2);
  });

  it("tools/list_changed refreshes the list and tells the listeners; an unsubscribed listener hears nothing", async () => {
    const servers = { test: testServer() };
    const { provider } = createTestProvider(servers);
    closeLater(provider);
    await provider.start();
    let heard = 0;
    let heardAfterUnsubscribe = 0;
    provider.onToolsChanged(() => {
      heard += 1;
    });
    const unsubscribe = provider.onToolsChanged(() => {
      heardAfterUnsubscribe += 1;
    });
    unsubscribe();
    await provider.call(callRequest("test__add_tool", { name: "greet" }));
    await waitFor(() => heard > 0, 5_000, "the listener");
    expect(provider.list().map((tool) => tool.name)).toContain("test__greet");
    expect(heardAfterUnsubscribe).toBe(0);
    expect(textOf(await provider.call(callRequest("test__greet")))).toBe("hello from greet");
  });

  it("close() ends every server process and the state is stopped", async () => {
    const files = scratch();
    cleanups.push(files.remove);
    const servers = { one: testServer({ recordFile: files.recordFile }), two: testServer({ recordFile: files.recordFile }) };
    const { provider } = createTestProvider(servers);
    await provider.start();
    const pids = pidsOf(files.recorded());
    expect(pids).toHaveLength(2);
    expect(pids.every(isAlive)).toBe(true);
    // A call still running when the bot stops must not keep its process alive.
    const running = provider.call(callRequest("one__slow", { seconds: 30, silent: true }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await provider.close();
    await waitFor(() => !pids.some(isAlive), 5_000, "the processes to end");
    expect(provider.status().map((status) => status.state)).toEqual(["stopped", "stopped"]);
    expect((await running).isError).toBe(true);
  });

  it("close() during a pending restart cancels it", async () => {
    const files = scratch();
    cleanups.push(files.remove);
    const servers = { test: testServer({ recordFile: files.recordFile }) };
    const { provider } = createTestProvider(servers, { restartBackoff: { initialDelayMs: 200, maxDelayMs: 200 } });
    await provider.start();
    await provider.call(callRequest("test__crash"));
    await provider.close();
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(pidsOf(files.recorded())).toHaveLength(1);
    expect(provider.status()[0]?.state).toBe("stopped");
  });
});
