import type { AskId, SessionId } from "./ids.js";
import type { Ask, NewAsk, NewSession } from "./session-store.js";

/** A bearer token an admin created (`/parley tokens create`): only the SHA-256 of its secret is kept. */
export interface StoredToken {
  name: string;
  /** Hex SHA-256 of the secret. */
  secretHash: string;
  createdBy: string;
  createdAt: number;
  revokedAt: number | null;
}

/** What the API keeps about an ask it opened, beside the ask row itself. */
export interface ExternalAsk {
  askId: AskId;
  /** The name of the token that opened it: the only one that may read or cancel it. */
  token: string;
  metadata: unknown;
  callbackUrl: string | null;
  idempotencyKey: string | null;
  /** SHA-256 of the request body: a retry under the same key must send the same request. */
  requestHash: string;
  /** Delivery attempts made so far; the callback is due again at `callbackNextAt`. */
  callbackAttempts: number;
  callbackNextAt: number | null;
  /** Set once the callback was delivered or given up: it is never sent again. */
  callbackDoneAt: number | null;
  callbackOutcome: string | null;
}

export interface NewExternalAsk {
  /** The session to create when the conversation has none yet. */
  session: NewSession;
  ask: NewAsk;
  token: string;
  idempotencyKey: string | null;
  requestHash: string;
  metadata: unknown;
  callbackUrl: string | null;
  now: number;
}

export type ExternalCreate =
  | { kind: "created"; askId: AskId; sessionId: SessionId }
  /** The token used this idempotency key before: the earlier ask, whatever this request holds. */
  | { kind: "replayed"; external: ExternalAsk }
  /** The conversation is busy: a turn runs there, or another question waits. */
  | { kind: "busy" };

/** What the HTTP API and the MCP server keep: the asks they opened, their callbacks, and the admins' tokens. */
export interface ApiStore {
  /**
   * In one transaction: replays an earlier ask of the same token and idempotency key; else binds the conversation's
   * session (created when absent; refused as busy unless idle or failed), writes the pending ask, sets the session
   * `waiting` and writes the API's record. Turn counters and history are untouched.
   */
  createExternalAsk(input: NewExternalAsk): Promise<ExternalCreate>;
  /** The API's record of one ask. */
  getExternalAsk(askId: string): Promise<ExternalAsk | undefined>;
  /** The ask a token opened under an idempotency key, if any. */
  findByIdempotencyKey(token: string, key: string): Promise<ExternalAsk | undefined>;
  /** Asks that ended with a callback not yet delivered nor given up, whose next attempt is due, oldest first. */
  listDueCallbacks(now: number, limit: number): Promise<Array<{ external: ExternalAsk; ask: Ask }>>;
  /**
   * Takes the next delivery attempt of a due callback for one caller (compare-and-set on its due time): returns
   * the attempt's number, with the next attempt set to `retryAt` should this one die; undefined when another took it.
   */
  takeCallback(askId: string, now: number, retryAt: number): Promise<number | undefined>;
  /** The callback was delivered, or given up: recorded with its outcome, never sent again. */
  finishCallback(askId: string, outcome: string, now: number): Promise<void>;
  /** Stores a new token; false when the name was ever taken (a revoked token keeps its name: asks belong to names). */
  saveToken(token: StoredToken): Promise<boolean>;
  /** Revokes a token by name; false when there is none live by that name. */
  revokeToken(name: string, now: number): Promise<boolean>;
  /** Every token an admin created, revoked ones included, oldest first. */
  listTokens(): Promise<StoredToken[]>;
}
