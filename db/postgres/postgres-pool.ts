import pg from "pg";

/** How long a statement waits for another transaction's row lock before "storage-busy" reaches the caller (as SQLite's busy_timeout). */
const LOCK_TIMEOUT_MS = 5000;
/** How long a query waits for a free pooled connection, or for a new one, before "storage-unavailable". */
const CONNECT_TIMEOUT_MS = 10_000;

export interface PoolOptions {
  /** Use this schema (created if missing) instead of the connection's default search_path: tests, or several deployments in one database. */
  schema?: string;
  lockTimeoutMs?: number;
  maxConnections?: number;
}

const INT8_OID = 20;

/**
 * BIGINT columns come back as JS numbers, not the driver's default strings: they hold millisecond times and
 * token totals, far below 2^53. Set per pool, not on the global `pg.types`, so other pg users are untouched.
 */
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === INT8_OID ? Number : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig["getTypeParser"],
};

export function createPool(url: string, options: PoolOptions = {}): pg.Pool {
  const { schema } = options;
  const pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    lock_timeout: options.lockTimeoutMs ?? LOCK_TIMEOUT_MS,
    types,
    // Awaited by the pool before the connection is handed out, so every query on it sees the schema.
    ...(schema === undefined ? {} : { onConnect: (client) => client.query(`SET search_path TO ${pg.escapeIdentifier(schema)}`) }),
  });
  // An idle connection that drops (server restart, network) is reported here; without a listener Node would
  // crash the process. The next query gets a fresh connection, or a "storage-unavailable" StoreError.
  pool.on("error", () => {});
  // The same for a checked-out connection dropping between two statements of a transaction: the statement
  // that follows fails and is translated.
  pool.on("connect", (client) => client.on("error", () => {}));
  return pool;
}

/** A named statement: prepared once per connection on first use, then only bound and executed. */
export interface Statement {
  name: string;
  text: string;
}

export async function run<Row extends pg.QueryResultRow>(
  client: pg.Pool | pg.PoolClient,
  statement: Statement,
  values: unknown[],
): Promise<pg.QueryResult<Row>> {
  return client.query<Row>({ name: statement.name, text: statement.text, values });
}

/** Runs `work` in one transaction on one pooled connection; a failure rolls back, and a connection that cannot roll back is discarded. */
export async function transaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch((rollbackError: Error) => {
      broken = rollbackError;
    });
    throw error;
  } finally {
    client.release(broken);
  }
}
