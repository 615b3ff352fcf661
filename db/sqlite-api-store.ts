import type Database from "better-sqlite3";
import type { ExternalAsk, StoredToken } from "../src/ports/api-store.js";
import type { Ask } from "../src/ports/session-store.js";
import { type ApiAskRow, type TokenRow, toExternal, toToken } from "./api-rows.js";

/** The API's rows on the SQLite file: its asks' records and callbacks (the outbox), and admins' tokens. */
export class SqliteApiStore {
  private readonly statements;

  constructor(
    db: Database.Database,
    /** Reads an asks row: the session store's own mapping, so both read asks alike. */
    private readonly readAsk: (row: never) => Ask,
  ) {
    this.statements = {
      insert: db.prepare(
        `INSERT INTO api_asks (ask_id, token, idempotency_key, request_hash, metadata, callback_url)
         VALUES (@askId, @token, @idempotencyKey, @requestHash, @metadata, @callbackUrl)`,
      ),
      byId: db.prepare<[string], ApiAskRow>("SELECT * FROM api_asks WHERE ask_id = ?"),
      byKey: db.prepare<[string, string], ApiAskRow>("SELECT * FROM api_asks WHERE token = ? AND idempotency_key = ?"),
      due: db.prepare<[number, number], ApiAskRow & Record<string, unknown>>(
        `SELECT api_asks.*, asks.* FROM api_asks JOIN asks ON asks.id = api_asks.ask_id
         WHERE api_asks.callback_url IS NOT NULL AND api_asks.callback_done_at IS NULL
           AND (api_asks.callback_next_at IS NULL OR api_asks.callback_next_at <= ?) AND asks.status != 'pending'
         ORDER BY asks.ended_at LIMIT ?`,
      ),
      take: db.prepare<[number, string, number], { callback_attempts: number }>(
        `UPDATE api_asks SET callback_attempts = callback_attempts + 1, callback_next_at = ?
         WHERE ask_id = ? AND callback_done_at IS NULL AND (callback_next_at IS NULL OR callback_next_at <= ?)
         RETURNING callback_attempts`,
      ),
      finish: db.prepare<[number, string, string]>(
        "UPDATE api_asks SET callback_done_at = ?, callback_outcome = ? WHERE ask_id = ? AND callback_done_at IS NULL",
      ),
      saveToken: db.prepare(
        `INSERT OR IGNORE INTO api_tokens (name, secret_hash, created_by, created_at, revoked_at)
         VALUES (@name, @secretHash, @createdBy, @createdAt, NULL)`,
      ),
      revokeToken: db.prepare<[number, string]>("UPDATE api_tokens SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL"),
      tokens: db.prepare<[], TokenRow>("SELECT * FROM api_tokens ORDER BY created_at, name"),
    };
  }

  /** Written inside the caller's transaction, with the ask it describes. */
  insert(record: Pick<ExternalAsk, "askId" | "token" | "idempotencyKey" | "requestHash" | "metadata" | "callbackUrl">): void {
    this.statements.insert.run({ ...record, metadata: record.metadata === null ? null : JSON.stringify(record.metadata) });
  }

  get(askId: string): ExternalAsk | undefined {
    const row = this.statements.byId.get(askId);
    return row ? toExternal(row) : undefined;
  }

  byIdempotencyKey(token: string, key: string): ExternalAsk | undefined {
    const row = this.statements.byKey.get(token, key);
    return row ? toExternal(row) : undefined;
  }

  due(now: number, limit: number): Array<{ external: ExternalAsk; ask: Ask }> {
    // Both tables' columns in one row: asks' names and api_asks' names do not overlap.
    return this.statements.due.all(now, limit).map((row) => ({ external: toExternal(row), ask: this.readAsk(row as never) }));
  }

  take(askId: string, now: number, retryAt: number): number | undefined {
    return this.statements.take.get(retryAt, askId, now)?.callback_attempts;
  }

  finish(askId: string, outcome: string, now: number): void {
    this.statements.finish.run(now, outcome, askId);
  }

  saveToken(token: StoredToken): boolean {
    // The name is the key: a name ever used, revoked or not, is an ignored insert.
    return this.statements.saveToken.run(token).changes > 0;
  }

  revokeToken(name: string, now: number): boolean {
    return this.statements.revokeToken.run(now, name).changes > 0;
  }

  listTokens(): StoredToken[] {
    return this.statements.tokens.all().map(toToken);
  }
}
