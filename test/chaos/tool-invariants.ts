import type { AskRow, SessionRow } from "./invariants.js";

/** One row of the tool journal (db/migrations/002_tool_calls.sql). */
export interface ToolCallRow {
  session_id: string;
  tool_use_id: string;
  name: string;
  status: "started" | "finished";
}

export interface ToolCheckInput {
  asks: readonly AskRow[];
  toolCalls: readonly ToolCallRow[];
  /** The chaos MCP server's record: `start <tool> <name>` and `done <tool> <name>` lines. */
  records: readonly string[];
  /** The one tool_result stored per tool_use id (as text). */
  storedResults: ReadonlyMap<string, readonly string[]>;
  sessions: ReadonlyMap<string, SessionRow>;
  owner: string;
}

export interface ToolStats {
  toolApprovals: number;
  toolsApproved: number;
  toolsDenied: number;
  toolsCancelled: number;
  toolRuns: number;
  toolsRunTwice: number;
  idempotentReruns: number;
  interruptedAnswered: number;
  approvedCallsLost: number;
  /** Approved calls whose turn was given up (repeated crashes) before they were sent: answered `cancelled`. */
  givenUpBeforeRun: number;
  /** Approved calls whose turn was given up while they ran: answered `interrupted`, idempotent or not. */
  givenUpWhileRunning: number;
}

const GIVEN_UP = "cancelled: the turn was given up before this call ran";
const givenUpWhileRunning = (tool: string) =>
  `interrupted: Parley restarted while ${tool} was running, then gave the turn up; it may or may not have taken effect`;
const interrupted = (tool: string) => `interrupted: Parley restarted while ${tool} was running; it may or may not have taken effect`;

/**
 * Issue 12's chaos invariants for tools that need approval, across kills between approval and execution and
 * during execution: no non-idempotent tool runs twice, nothing runs without an Approve, every approved call
 * either ran (the model read its real result) or the model read `interrupted` (never for an idempotent tool,
 * which runs again), or, when repeated crashes gave its turn up, `interrupted` (idempotent or not: the turn is
 * over) or, before it was sent, `cancelled`; and every call a crash left started is answered `interrupted`.
 */
export function checkToolInvariants(input: ToolCheckInput, fail: (text: string) => void): ToolStats {
  const stats: ToolStats = {
    toolApprovals: 0,
    toolsApproved: 0,
    toolsDenied: 0,
    toolsCancelled: 0,
    toolRuns: 0,
    toolsRunTwice: 0,
    idempotentReruns: 0,
    interruptedAnswered: 0,
    approvedCallsLost: 0,
    givenUpBeforeRun: 0,
    givenUpWhileRunning: 0,
  };
  const runs = new Map<string, number>();
  for (const line of input.records) {
    const [event, tool, name] = line.split(" ");
    if (event !== "start" || !tool || !name) continue;
    stats.toolRuns++;
    runs.set(`${tool} ${name}`, (runs.get(`${tool} ${name}`) ?? 0) + 1);
  }
  const journal = new Map(input.toolCalls.map((row) => [`${row.session_id}/${row.tool_use_id}`, row]));
  const approvedRuns = new Set<string>();

  for (const ask of input.asks) {
    const spec = JSON.parse(ask.spec) as { type: string; approval?: { tool: string; argumentsText: string } };
    if (spec.type !== "approval" || !spec.approval) continue;
    stats.toolApprovals++;
    const exposed = spec.approval.tool;
    const remote = exposed.split("__")[1] ?? exposed;
    const name = Object.values(JSON.parse(spec.approval.argumentsText) as Record<string, string>)[0] ?? "";
    const key = `${remote} ${name}`;
    const ran = runs.get(key) ?? 0;
    const idempotent = remote === "restart";
    const results = input.storedResults.get(ask.tool_use_id) ?? [];
    const stored = results[0];
    const row = journal.get(`${ask.session_id}/${ask.tool_use_id}`);
    const decision = (JSON.parse(ask.answer ?? "null") as { value?: { decision?: string } } | null)?.value?.decision;
    const approved = ask.status === "answered" && decision === "approve";

    if (!idempotent && ran > 1) {
      stats.toolsRunTwice++;
      fail(`approval ${ask.id}: ${key} ran ${ran} times (not idempotent)`);
    }
    if (idempotent && ran > 1) stats.idempotentReruns++;

    if (!approved) {
      if (ran > 0) fail(`approval ${ask.id} (${ask.status} ${decision ?? ""}): ${key} ran anyway`);
      if (row) fail(`approval ${ask.id} (${ask.status}): the call was journalled as ${row.status}`);
      const expected =
        ask.status === "answered"
          ? `denied by ${platformOf(input.sessions.get(ask.session_id))}:${input.owner}: no reason given`
          : ask.status === "expired"
            ? "approval timed out"
            : "cancelled";
      if (ask.status === "answered") stats.toolsDenied++;
      if (ask.status === "cancelled") stats.toolsCancelled++;
      if (stored !== undefined && stored !== expected) fail(`approval ${ask.id}: the model read ${stored}, expected ${expected}`);
      continue;
    }

    stats.toolsApproved++;
    approvedRuns.add(key);
    if (stored === undefined) {
      stats.approvedCallsLost++;
      fail(`approval ${ask.id}: approved, yet no result of ${key} was stored (session ${ask.session_id})`);
      continue;
    }
    if (stored === `${remote} ${name}: done`) {
      if (ran === 0) fail(`approval ${ask.id}: the model read ${key}'s result, yet the server never ran it`);
      if (row?.status !== "finished") fail(`approval ${ask.id}: ran, but the journal says ${row?.status ?? "nothing"}`);
    } else if (stored === interrupted(exposed)) {
      stats.interruptedAnswered++;
      if (idempotent) fail(`approval ${ask.id}: ${key} is idempotent, yet answered interrupted instead of run again`);
      if (row?.status !== "started") fail(`approval ${ask.id}: answered interrupted, but the journal says ${row?.status ?? "nothing"}`);
    } else if (stored === givenUpWhileRunning(exposed)) {
      stats.givenUpWhileRunning++;
      if (row?.status !== "started")
        fail(`approval ${ask.id}: answered as given up while running, but the journal says ${row?.status ?? "nothing"}`);
    } else if (stored === GIVEN_UP) {
      stats.givenUpBeforeRun++;
      // Only recovery's give-up writes this (the session failed then; a later message may have started it again).
      if (ran > 0 || row)
        fail(`approval ${ask.id}: answered as given up before it ran, yet ${key} ran ${ran} times (journal: ${row?.status})`);
    } else fail(`approval ${ask.id}: approved, and the model read ${stored}`);
  }

  for (const key of runs.keys()) if (!approvedRuns.has(key)) fail(`${key} ran without an Approve`);
  for (const row of input.toolCalls) {
    if (row.status !== "started") continue;
    const stored = input.storedResults.get(row.tool_use_id)?.[0];
    if (stored !== interrupted(row.name) && stored !== givenUpWhileRunning(row.name))
      fail(`tool call ${row.tool_use_id} (${row.name}) left started, and the model read ${stored}`);
  }
  return stats;
}

/** The platform a session's people are named on (`slack:U…`, `discord:…`): its row's `platform` column. */
function platformOf(session: SessionRow | undefined): string {
  return (session as (SessionRow & { platform?: string }) | undefined)?.platform ?? "slack";
}
