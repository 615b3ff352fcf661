/**
 * Issue 14's figures: suspend + resume throughput of Parley on PostgreSQL with 1, 2 and 4 processes, Parley on SQLite
 * with 1, and LangGraph JS with its PostgreSQL checkpointer, at each H; each configuration several times, the runs
 * interleaved (run 1 of everything, then run 2, …) so that a change in the machine's load falls on all of them.
 *
 *   npx tsx bench/postgres-scaling.ts [--runs 3] [--histories 0,20,200] [--sync-off] [--scale 1] [--json runs.jsonl]
 *
 * Each run is one `bench/workers/postgres-throughput.ts` process (which starts the N resume processes). Prints a
 * Markdown table: the median of the runs with the lowest and highest in brackets, the cores busy machine-wide during the
 * timed phase (/proc/stat), and the 1-minute load average (/proc/loadavg) before each run. --sync-off adds rows with
 * synchronous_commit=off on the PostgreSQL connections.
 */
import { execFileSync } from "node:child_process";
import { appendFileSync } from "node:fs";
import { parseArgs } from "node:util";
import type { ScalingResult } from "./workers/postgres-throughput.js";

const { values: flags } = parseArgs({
  options: {
    runs: { type: "string", default: "3" },
    histories: { type: "string", default: "0,20,200" },
    "sync-off": { type: "boolean", default: false },
    scale: { type: "string", default: "1" },
    json: { type: "string" },
  },
});
const runs = Number(flags.runs);
const histories = flags.histories.split(",").map(Number);
const scale = Number(flags.scale);

interface Config {
  system: "parley-sqlite" | "parley-postgres" | "langgraph-postgres";
  processes: number;
  syncOff: boolean;
}
/** Sessions per process: each run of a configuration takes a few seconds on 2 cores. */
function sessionsFor(config: Config, history: number): number {
  const base = config.system === "parley-sqlite" ? 500 : config.system === "parley-postgres" ? 150 : history >= 200 ? 30 : 60;
  return Math.max(2, Math.round(base * scale));
}
const configs: Config[] = [
  { system: "parley-sqlite", processes: 1, syncOff: false },
  ...[1, 2, 4].map((processes) => ({ system: "parley-postgres" as const, processes, syncOff: false })),
  ...[1, 2, 4].map((processes) => ({ system: "langgraph-postgres" as const, processes, syncOff: false })),
  ...(flags["sync-off"]
    ? [
        { system: "parley-postgres" as const, processes: 1, syncOff: true },
        { system: "parley-postgres" as const, processes: 4, syncOff: true },
        { system: "langgraph-postgres" as const, processes: 1, syncOff: true },
      ]
    : []),
];

const results = new Map<string, ScalingResult[]>();
const keyOf = (config: Config, history: number) => `${history}|${config.system}|${config.processes}|${config.syncOff}`;
for (let run = 1; run <= runs; run++) {
  for (const history of histories) {
    for (const config of configs) {
      const sessions = sessionsFor(config, history);
      const args = [config.system, config.processes, history, sessions, 3, ...(config.syncOff ? ["sync-off"] : [])].map(String);
      const output = execFileSync(process.execPath, ["--import", "tsx", "bench/workers/postgres-throughput.ts", ...args], {
        encoding: "utf8",
        maxBuffer: 16 * 1024 * 1024,
      });
      const result = JSON.parse(output.trim().split("\n").at(-1) ?? "") as ScalingResult;
      const key = keyOf(config, history);
      results.set(key, [...(results.get(key) ?? []), result]);
      if (flags.json) appendFileSync(flags.json, `${JSON.stringify({ run, ...result })}\n`);
      process.stderr.write(
        `run ${run} H=${history} ${config.system}×${config.processes}${config.syncOff ? " sync-off" : ""}: ` +
          `${result.resumesPerSecond.toFixed(0)} resumes/s, load ${result.load.join(" → ")}\n`,
      );
    }
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};
const format = (value: number, digits = 0) =>
  value.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
const spread = (values: number[], digits = 0) =>
  values.length < 2
    ? format(values[0]!, digits)
    : `${format(median(values), digits)} (${format(Math.min(...values), digits)}–${format(Math.max(...values), digits)})`;

console.log(
  "| H | system | store | processes | sessions | resumes/s | p50 ms | p99 ms | KiB/session | KiB/session after VACUUM FULL | empty store KiB | busy cores | load before runs |",
);
console.log("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
for (const history of histories) {
  for (const config of configs) {
    const rows = results.get(keyOf(config, history)) ?? [];
    const first = rows[0]!;
    const store = `${first.store === "postgres" ? "PostgreSQL" : "SQLite"}${config.syncOff ? " (synchronous_commit=off)" : ""}`;
    const vacuumed = rows.map((row) => row.vacuumedBytesPerSession).filter((value) => value !== null);
    const busy = rows.map((row) => row.busyCores).filter((value) => value !== null);
    console.log(
      `| ${history} | ${first.system} | ${store} | ${config.processes} | ${first.sessions} | ${spread(rows.map((row) => row.resumesPerSecond))} | ` +
        `${spread(
          rows.map((row) => row.p50Ms),
          2,
        )} | ${spread(
          rows.map((row) => row.p99Ms),
          1,
        )} | ${format(median(rows.map((row) => row.bytesPerSession)) / 1024, 1)} | ` +
        `${vacuumed.length > 0 ? format(median(vacuumed) / 1024, 1) : "–"} | ${format(first.emptyBytes / 1024)} | ${busy.length > 0 ? spread(busy, 2) : "–"} | ${rows.map((row) => format(row.load[0], 2)).join(", ")} |`,
    );
  }
}
