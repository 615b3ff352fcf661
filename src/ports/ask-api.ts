import type { AskResult } from "../ask/result.js";
import type { AskStatus } from "./session-store.js";

/** An ask as the HTTP API and the MCP server show it (DESIGN §12): the GET body, and what a callback carries. */
export interface AskView {
  id: string;
  status: AskStatus;
  /** The §2 result once the ask ended; a password is masked unless the reader waited in the process that took it. */
  result: AskResult | null;
  /** `<platform>:<user id>` of whoever answered or cancelled on the platform. */
  answered_by: string | null;
  created_at: string;
  ended_at: string | null;
  metadata: unknown;
}

export type CreateOutcome =
  | { kind: "created" | "replayed"; view: AskView }
  /** 400: what is wrong with the request, worded so the caller can repair it. */
  | { kind: "invalid"; error: string }
  /** 409: an idempotency key reused with another request, or a thread busy with another question. */
  | { kind: "conflict"; error: string };

export type CancelOutcome = { kind: "cancelled" | "ended"; view: AskView } | { kind: "unknown" };

/** The inbound port of the HTTP API and the MCP server: asks put to people by other programs. */
export interface AskApi {
  /** The name of the live token whose secret this is; undefined for anything else. Constant time per token. */
  authenticate(secret: string): Promise<string | undefined>;
  /** Opens an ask from a request body (any §2 dialect under `ask`, or GenericAgent's payload under `interrupt`). */
  create(token: string, body: unknown, idempotencyKey?: string): Promise<CreateOutcome>;
  /** One of the token's asks, after waiting up to `waitMs` for it to end; undefined when the token has no such ask. */
  get(token: string, askId: string, waitMs?: number, signal?: AbortSignal): Promise<AskView | undefined>;
  /** Cancels one of the token's asks; `ended` when it had already ended. */
  cancel(token: string, askId: string): Promise<CancelOutcome>;
}

/** POSTs one callback with its signature headers; resolves with the receiver's HTTP status, rejects when unreachable. */
export interface CallbackSender {
  send(url: string, body: string, headers: Record<string, string>): Promise<number>;
}
