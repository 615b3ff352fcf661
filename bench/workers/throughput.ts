import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { langgraphThroughput } from "../langgraph-throughput.js";
import { parleyThroughput } from "../parley-throughput.js";
import { rawThroughput } from "../raw-throughput.js";

// One system and one history size per process, so peak RSS and GC belong to that run alone.
const [system, history, sessions, asks] = process.argv.slice(2);
const workload = { sessions: Number(sessions), asksPerSession: Number(asks ?? 3), history: Number(history) };
const directory = mkdtempSync(join(tmpdir(), "parley-bench-"));
const path = join(directory, "bench.db");
try {
  const result =
    system === "parley" || system === "parley-on-commit"
      ? await parleyThroughput(path, workload, system === "parley" ? "worker" : "on-commit")
      : system === "raw"
        ? rawThroughput(path, workload)
        : await langgraphThroughput(path, workload);
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  rmSync(directory, { recursive: true, force: true });
}
