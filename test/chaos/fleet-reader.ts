import pg from "pg";
import type { DriverSnapshot } from "./driver.js";
import { CHAOS_CHANNEL } from "./driver.js";
import type { AskRow, MessageRow, SessionRow, StoredRows } from "./invariants.js";
import type { ToolCallRow } from "./tool-invariants.js";

const INT8_OID = 20;

/**
 * The crash suite's reads of a PostgreSQL fleet's schema, in the shapes the SQLite checks read (invariants.ts,
 * driver.ts). Times and counters are BIGINT there, which `pg` returns as strings: this client reads them as numbers
 * (milliseconds and token counts stay far below 2^53).
 */
export class FleetReader {
  private readonly client: pg.Client;

  constructor(databaseUrl: string) {
    this.client = new pg.Client({
      connectionString: databaseUrl,
      types: {
        getTypeParser: (oid: number, format?: string) => (oid === INT8_OID ? Number : pg.types.getTypeParser(oid, format as "text")),
      },
    });
    // A dead server must fail the read that met it, not the test process.
    this.client.on("error", () => {});
  }

  async connect(): Promise<this> {
    await this.client.connect();
    return this;
  }

  async close(): Promise<void> {
    await this.client.end().catch(() => {});
  }

  /** The chaos channel's sessions and the pending asks, what the driver acts on. */
  async driverSnapshot(): Promise<DriverSnapshot> {
    const sessions = await this.rows<SessionRow>("SELECT * FROM sessions WHERE channel = $1", [CHAOS_CHANNEL]);
    const pending = await this.rows<AskRow>("SELECT * FROM asks WHERE status = 'pending'");
    return { sessions, pending };
  }

  /**
   * Every row the checks read. PostgreSQL has no integrity_check like SQLite's (its pages are checksummed and
   * crash-safe by WAL); what the checks can see (message sequences, counts, one result per ask) they check.
   */
  async storedRows(): Promise<StoredRows> {
    return {
      integrity: "ok",
      asks: await this.rows<AskRow>("SELECT * FROM asks ORDER BY created_at"),
      sessions: await this.rows<SessionRow>("SELECT * FROM sessions"),
      messages: await this.rows<MessageRow>("SELECT session_id, seq, role, content FROM messages ORDER BY session_id, seq"),
      audit: await this.rows<{ target: string; action: string }>("SELECT target, action FROM audit WHERE action LIKE 'ask-%'"),
      toolCalls: await this.rows<ToolCallRow>("SELECT session_id, tool_use_id, name, status FROM tool_calls"),
    };
  }

  /** Sessions whose turn lease is held now, and by whom (for reading a kept run). */
  async leases(): Promise<Array<{ id: string; status: string; lease_owner: string; lease_until: number }>> {
    return this.rows("SELECT id, status, lease_owner, lease_until FROM sessions WHERE lease_owner IS NOT NULL");
  }

  private async rows<Row extends pg.QueryResultRow>(sql: string, values: unknown[] = []): Promise<Row[]> {
    return (await this.client.query<Row>(sql, values)).rows;
  }
}
