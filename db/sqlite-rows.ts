import { asAskId, asSessionId, asUserId } from "../src/ports/ids.js";
import type { Ask, Session, SessionStatus, ToolCallRecord } from "../src/ports/session-store.js";
import { checkVersion, readAnswer, readPlatform, readSiblingResults, readSpec, readToolResult } from "./records.js";

/** A sessions row. */
export interface SessionRow {
  id: string;
  v: number;
  platform: string;
  workspace: string;
  channel: string;
  thread: string;
  owner_id: string;
  status: SessionStatus;
  last_outcome: Session["lastOutcome"];
  last_error: string | null;
  turn_count: number;
  turn_asks: number;
  turn_iterations: number;
  recovery_attempts: number;
  stop_requested: number;
  message_count: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  created_at: number;
  updated_at: number;
}

/** The columns of sessions that toSession reads, in the order of the array reads that select them. */
export const SESSION_COLUMNS = [
  "id",
  "v",
  "platform",
  "workspace",
  "channel",
  "thread",
  "owner_id",
  "status",
  "last_outcome",
  "last_error",
  "turn_count",
  "turn_asks",
  "turn_iterations",
  "recovery_attempts",
  "stop_requested",
  "message_count",
  "input_tokens",
  "output_tokens",
  "cache_read_tokens",
  "cache_write_tokens",
  "created_at",
  "updated_at",
] as const;

/** The columns of asks that toAsk reads, in the order of the array reads that select them. */
export const ASK_COLUMNS = [
  "id",
  "v",
  "session_id",
  "tool_use_id",
  "spec",
  "status",
  "sibling_results",
  "card_ref",
  "deadline",
  "answer",
  "answered_by",
  "created_at",
  "ended_at",
] as const;

/**
 * A row read as an array (a statement in raw mode) named by its select list, from `offset`. better-sqlite3 names
 * each column of an object row through a call into V8, about 0.8 µs a column on this machine; an array row costs a
 * third of that, and naming its values here a few nanoseconds each. The hot path's wide reads (a session is 22
 * columns, an ask 13) go this way.
 */
export function namedRow<T>(columns: readonly string[], values: readonly unknown[], offset = 0): T {
  const row: Record<string, unknown> = {};
  for (let index = 0; index < columns.length; index++) row[columns[index]!] = values[offset + index];
  return row as T;
}

export const sessionRowOf = (values: readonly unknown[], offset = 0) => namedRow<SessionRow>(SESSION_COLUMNS, values, offset);
export const askRowOf = (values: readonly unknown[], offset = 0) => namedRow<AskRow>(ASK_COLUMNS, values, offset);

/** A tool_calls row. */
export interface ToolCallRow {
  session_id: string;
  tool_use_id: string;
  v: number;
  name: string;
  arguments_hash: string;
  status: ToolCallRecord["status"];
  result: string | null;
  started_at: number;
  finished_at: number | null;
}

/** An asks row. */
export interface AskRow {
  id: string;
  v: number;
  session_id: string;
  tool_use_id: string;
  spec: string;
  status: Ask["status"];
  sibling_results: string;
  card_ref: string | null;
  deadline: number;
  answer: string | null;
  answered_by: string | null;
  created_at: number;
  ended_at: number | null;
}

export function toSession(row: SessionRow): Session {
  checkVersion("session", row.v);
  return {
    id: asSessionId(row.id),
    conversation: { platform: readPlatform(row.platform), workspace: row.workspace, channel: row.channel, thread: row.thread },
    ownerId: asUserId(row.owner_id),
    status: row.status,
    lastOutcome: row.last_outcome,
    lastError: row.last_error,
    turnCount: row.turn_count,
    turnAsks: row.turn_asks,
    turnIterations: row.turn_iterations,
    recoveryAttempts: row.recovery_attempts,
    stopRequested: row.stop_requested === 1,
    usage: {
      inputTokens: row.input_tokens,
      outputTokens: row.output_tokens,
      cacheReadTokens: row.cache_read_tokens,
      cacheWriteTokens: row.cache_write_tokens,
    },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function toToolCall(row: ToolCallRow): ToolCallRecord {
  checkVersion("tool call", row.v);
  return {
    sessionId: asSessionId(row.session_id),
    toolUseId: row.tool_use_id,
    name: row.name,
    argumentsHash: row.arguments_hash,
    status: row.status,
    result: row.result === null ? null : readToolResult(row.result),
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}

export function toAsk(row: AskRow): Ask {
  checkVersion("ask", row.v);
  return {
    id: asAskId(row.id),
    sessionId: asSessionId(row.session_id),
    toolUseId: row.tool_use_id,
    spec: readSpec(row.spec),
    status: row.status,
    siblingResults: readSiblingResults(row.sibling_results),
    cardRef: row.card_ref,
    deadline: row.deadline,
    answer: readAnswer(row.answer),
    answeredBy: row.answered_by === null ? null : asUserId(row.answered_by),
    createdAt: row.created_at,
    endedAt: row.ended_at,
  };
}
