import { describe, expect, it } from "vitest";
import { langgraphThroughput } from "../../bench/langgraph-throughput.js";
import { parleyThroughput } from "../../bench/parley-throughput.js";
import { rawThroughput } from "../../bench/raw-throughput.js";
import { ScriptedModel } from "../../bench/workload.js";
import { tempDatabasePath } from "../support/harness.js";

// A smoke run of the benchmark harness: it completes and its numbers are sane. Speed is `npm run bench`'s job.
describe("the benchmark harness", () => {
  const workload = { sessions: 3, asksPerSession: 3, history: 20 };

  it.each([
    ["Parley", (path: string) => parleyThroughput(path, workload)],
    ["raw better-sqlite3", async (path: string) => rawThroughput(path, workload)],
    ["LangGraph JS", (path: string) => langgraphThroughput(path, workload)],
  ])("%s runs every resume and reports sane figures", async (system, run) => {
    const database = tempDatabasePath();
    try {
      const result = await run(database.path);
      expect(result.system).toBe(system);
      expect(result.resumes).toBe(workload.sessions * workload.asksPerSession);
      expect(result.resumesPerSecond).toBeGreaterThan(0);
      expect(result.p99Ms).toBeGreaterThanOrEqual(result.p50Ms);
      // At least the prior history itself is stored for each session.
      expect(result.bytesPerSession).toBeGreaterThan(workload.history * 400);
    } finally {
      database.cleanup();
    }
  });

  it("the scripted model asks K times, then ends the turn", async () => {
    const model = new ScriptedModel(2);
    const request = (results: number) => ({
      system: "",
      tools: [],
      maxTokens: 10,
      messages: [
        {
          role: "user" as const,
          content: Array.from({ length: results }, (_, index) => ({
            type: "tool_result" as const,
            tool_use_id: `t${index}`,
            content: "{}",
          })),
        },
      ],
    });
    expect((await model.createMessage(request(0))).stopReason).toBe("tool_use");
    expect((await model.createMessage(request(1))).stopReason).toBe("tool_use");
    expect((await model.createMessage(request(2))).stopReason).toBe("end_turn");
  });
});
