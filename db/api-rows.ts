import type { ExternalAsk, StoredToken } from "../src/ports/api-store.js";
import { asAskId } from "../src/ports/ids.js";

/** An api_asks row, as both databases return it (PostgreSQL's BIGINT parsed to number, see postgres/postgres-pool.ts). */
export interface ApiAskRow {
  ask_id: string;
  token: string;
  idempotency_key: string | null;
  request_hash: string;
  metadata: string | null;
  callback_url: string | null;
  callback_attempts: number;
  callback_next_at: number | null;
  callback_done_at: number | null;
  callback_outcome: string | null;
}

export interface TokenRow {
  name: string;
  secret_hash: string;
  created_by: string;
  created_at: number;
  revoked_at: number | null;
}

export function toExternal(row: ApiAskRow): ExternalAsk {
  return {
    askId: asAskId(row.ask_id),
    token: row.token,
    metadata: row.metadata === null ? null : (JSON.parse(row.metadata) as unknown),
    callbackUrl: row.callback_url,
    idempotencyKey: row.idempotency_key,
    requestHash: row.request_hash,
    callbackAttempts: row.callback_attempts,
    callbackNextAt: row.callback_next_at,
    callbackDoneAt: row.callback_done_at,
    callbackOutcome: row.callback_outcome,
  };
}

export function toToken(row: TokenRow): StoredToken {
  return { name: row.name, secretHash: row.secret_hash, createdBy: row.created_by, createdAt: row.created_at, revokedAt: row.revoked_at };
}
