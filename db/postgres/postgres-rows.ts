import { asAskId, asSessionId, asUserId } from "../../src/ports/ids.js";
import type { Ask, Session, SessionStatus, ToolCallRecord } from "../../src/ports/session-store.js";
// The one import of the row codecs for the PostgreSQL store: if they move, only this line changes.
import {
  checkVersion,
  RECORD_VERSION,
  readAnswer,
  readContent,
  readPlatform,
  readSiblingResults,
  readSpec,
  readToolResult,
  replyRow,
  writeContent,
  writeSpec,
  writeToolResult,
} from "../records.js";

export { checkVersion, RECORD_VERSION, readContent, replyRow, writeContent, writeSpec, writeToolResult };

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

/** A sessions row as the pool returns it (BIGINT parsed to number, see postgres-pool.ts). */
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
  stop_requested: boolean;
  message_count: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  created_at: number;
  updated_at: number;
}

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
    stopRequested: row.stop_requested,
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
