import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ElicitationRequest, ElicitationResponse } from "../../src/ports/tool-provider.js";
import { callRequest, createTestProvider, scratch, testServer, textOf, waitFor } from "./mcp-harness.js";

const files = scratch();
const { provider, logger } = createTestProvider({ test: testServer({ recordFile: files.recordFile }) });

beforeAll(() => provider.start());
afterAll(async () => {
  await provider.close();
  files.remove();
});

/** Calls the form tool, answering with `answer`; gives what the server got and the form the callback saw. */
async function confirmWith(answer: ElicitationResponse): Promise<{ serverGot: unknown; asked: ElicitationRequest[] }> {
  const asked: ElicitationRequest[] = [];
  const output = await provider.call(
    callRequest(
      "test__confirm_with_form",
      {},
      {
        onElicitation: async (request) => {
          asked.push(request);
          return answer;
        },
      },
    ),
  );
  expect(output.isError).toBe(false);
  return { serverGot: JSON.parse(textOf(output)), asked };
}

describe("elicitation during a call", () => {
  it("shows the server's form to the call's callback and sends the accepted values back", async () => {
    const { serverGot, asked } = await confirmWith({ action: "accept", content: { confirm: true, count: 2, color: "green" } });
    expect(serverGot).toEqual({ action: "accept", content: { confirm: true, count: 2, color: "green" } });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({
      message: "Confirm the deletion?",
      fields: [
        { name: "confirm", label: "Confirm: Really delete", type: "boolean", required: true },
        { name: "reason", label: "reason: Why", type: "string", required: false },
        { name: "count", label: "How many", type: "integer", required: false, default: 1 },
        { name: "color", label: "color", type: "string", required: false, options: ["red", "green"] },
      ],
    });
    expect(asked[0]?.signal?.aborted).toBe(true);
  });

  it("sends decline and cancel as they are", async () => {
    expect((await confirmWith({ action: "decline" })).serverGot).toEqual({ action: "decline", content: null });
    expect((await confirmWith({ action: "cancel" })).serverGot).toEqual({ action: "cancel", content: null });
  });

  it("declines when the call has no callback", async () => {
    const output = await provider.call(callRequest("test__confirm_with_form"));
    expect(JSON.parse(textOf(output))).toEqual({ action: "decline", content: null });
  });

  it("cancels, rather than sending, an answer that does not match the form", async () => {
    const { serverGot } = await confirmWith({ action: "accept", content: { count: 0, color: "blue" } });
    expect(serverGot).toEqual({ action: "cancel", content: null });
    expect(logger.lines).toContainEqual(
      expect.objectContaining({
        level: "warn",
        object: { server: "test", problems: ["confirm: required", "count: expected at least 1", "color: expected one of red, green"] },
      }),
    );
  });

  it("takes the form down when the call is stopped while it waits", async () => {
    const stop = new AbortController();
    let asked: ElicitationRequest | undefined;
    const running = provider.call(
      callRequest(
        "test__confirm_with_form",
        {},
        {
          signal: stop.signal,
          onElicitation: (request) => {
            asked = request;
            return new Promise<ElicitationResponse>(() => {});
          },
        },
      ),
    );
    await waitFor(() => asked !== undefined, 5_000, "the form");
    expect(asked?.signal?.aborted).toBe(false);
    stop.abort();
    expect(textOf(await running)).toBe("tool test__confirm_with_form was cancelled by a person");
    expect(asked?.signal?.aborted).toBe(true);
  });

  it("declines when several calls are in flight on the server, since it cannot tell which one asked", async () => {
    const other = provider.call(callRequest("test__slow", { seconds: 1, silent: true }));
    let asked = false;
    const output = await provider.call(
      callRequest(
        "test__confirm_with_form",
        {},
        {
          onElicitation: async () => {
            asked = true;
            return { action: "accept", content: { confirm: true } };
          },
        },
      ),
    );
    expect(JSON.parse(textOf(output))).toEqual({ action: "decline", content: null });
    expect(asked).toBe(false);
    expect((await other).isError).toBe(false);
  });
});
