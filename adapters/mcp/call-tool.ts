import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { type CallToolResult, ErrorCode, McpError, type Progress } from "@modelcontextprotocol/sdk/types.js";
import type { ToolCallRequest, ToolOutput } from "../../src/ports/tool-provider.js";
import { mapToolResult } from "./map-tool-result.js";

const MAX_PROGRESS_LENGTH = 120;

/** Limits of one call. */
export interface CallLimits {
  /** Past this the call is cancelled, progress or not (DESIGN §11: `TOOL_TIMEOUT_S`). */
  timeoutMs: number;
  maxResultChars: number;
}

/** How a call ended: its output, and whether the way it failed says the connection itself is gone. */
export interface CallOutcome {
  output: ToolOutput;
  connectionLost: boolean;
}

/**
 * Calls one tool through the SDK, which sends `notifications/cancelled` when the call times out or the caller's
 * signal aborts. Every failure becomes `isError` output for the model.
 */
export async function callTool(
  client: Client,
  server: string,
  remoteName: string,
  request: ToolCallRequest,
  limits: CallLimits,
): Promise<CallOutcome> {
  if (request.signal.aborted) return failed(`tool ${request.name} was cancelled by a person before it started`);
  try {
    // The SDK's own timeout sends `notifications/cancelled` (its `maxTotalTimeout` would not, so it is not used);
    // progress does not extend it, so a person waits no longer than TOOL_TIMEOUT_S for any call.
    const result = await client.callTool({ name: remoteName, arguments: request.input }, undefined, {
      signal: request.signal,
      timeout: limits.timeoutMs,
      resetTimeoutOnProgress: false,
      onprogress: (progress) => request.onProgress?.(describeProgress(progress)),
    });
    if (!("content" in result)) return failed(`tool ${request.name} answered in an old format Parley does not read`);
    return { output: mapToolResult(result as CallToolResult, limits.maxResultChars), connectionLost: false };
  } catch (error) {
    return describeFailure(error, server, request, limits);
  }
}

function describeFailure(error: unknown, server: string, request: ToolCallRequest, limits: CallLimits): CallOutcome {
  const tool = request.name;
  if (request.signal.aborted) return failed(`tool ${tool} was cancelled by a person`);
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout)
      return failed(`tool ${tool} timed out after ${seconds(limits.timeoutMs)} s and was cancelled`);
    if (error.code === ErrorCode.ConnectionClosed) {
      return {
        ...failed(`server ${server} stopped during the call to ${tool}; the call may or may not have taken effect`),
        connectionLost: true,
      };
    }
    return failed(`tool ${tool} failed: ${error.message}`);
  }
  // Not a protocol answer: the request did not get through (network down, session gone, process dead).
  const message = error instanceof Error ? error.message : String(error);
  return { ...failed(`tool ${tool} could not be called on server ${server}: ${message}`), connectionLost: true };
}

function failed(text: string): CallOutcome {
  return { output: { content: [{ type: "text", text }], isError: true }, connectionLost: false };
}

function seconds(milliseconds: number): string {
  return String(Math.round(milliseconds / 100) / 10);
}

/** `3/10 copying files`, on one short line. */
function describeProgress(progress: Progress): string {
  const count = progress.total === undefined ? `${progress.progress}` : `${progress.progress}/${progress.total}`;
  const line = [count, progress.message].filter(Boolean).join(" ").replace(/\s+/g, " ");
  return line.length > MAX_PROGRESS_LENGTH ? `${line.slice(0, MAX_PROGRESS_LENGTH - 1)}…` : line;
}
