import type { ElicitRequest, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../../src/ports/logger.js";
import type { ElicitationResponse, ToolCallRequest } from "../../src/ports/tool-provider.js";
import { checkElicitationAnswer, toElicitationFields } from "./elicitation-form.js";

/** A call running on a server; `ended` aborts when it returns, however it ends. */
export interface CallInFlight {
  request: ToolCallRequest;
  ended: AbortSignal;
}

/**
 * Answers a server's `elicitation/create`. MCP does not say which call asked, so the form goes to the call in
 * flight on that server when there is exactly one; with none, or several (the form could reach people of
 * another conversation), it is declined. The form lives as long as the call: when the call ends or the server
 * withdraws the request, the answer is `cancel`.
 */
export async function routeElicitation(
  server: string,
  params: ElicitRequest["params"],
  calls: readonly CallInFlight[],
  withdrawn: AbortSignal,
  logger: Logger,
): Promise<ElicitResult> {
  const decline = (reason: string): ElicitResult => {
    logger.warn({ server, reason }, "mcp elicitation declined");
    return { action: "decline" };
  };
  if (params.mode === "url") return decline("only form elicitations are supported");
  if (calls.length === 0) return decline("no call in flight on this server");
  if (calls.length > 1) return decline("several calls in flight on this server; cannot tell which one asked");
  const call = calls[0]!;
  const ask = call.request.onElicitation;
  if (!ask) return decline("the call in flight takes no elicitation");
  const form = toElicitationFields(params.requestedSchema);
  if (!form.ok) return decline(form.reason);

  const over = AbortSignal.any([call.ended, withdrawn]);
  let response: ElicitationResponse | undefined;
  try {
    response = await untilAborted(ask({ message: params.message, fields: form.fields, signal: over }), over);
  } catch (error) {
    logger.warn({ server, error: error instanceof Error ? error.message : String(error) }, "mcp elicitation callback failed");
    return { action: "cancel" };
  }
  if (response === undefined) return { action: "cancel" };
  if (response.action !== "accept") return { action: response.action };
  const checked = checkElicitationAnswer(params.requestedSchema, response.content);
  if (!checked.ok) {
    logger.warn({ server, problems: checked.problems }, "mcp elicitation answer does not match the form; cancelled");
    return { action: "cancel" };
  }
  return { action: "accept", content: checked.content };
}

/** The promise's value, or undefined as soon as the signal aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(undefined);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
