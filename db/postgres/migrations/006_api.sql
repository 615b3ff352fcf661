-- The PostgreSQL twin of db/migrations/006_api.sql: asks other programs put through the HTTP API or the MCP server
-- (DESIGN §12). The ask itself is a row of asks like any other; this row keeps what only the API needs. Its callback
-- columns are the outbox: an ended ask whose callback_done_at is NULL is owed a delivery, so an end committed just
-- before a crash is still delivered.
-- Metadata is TEXT, not JSONB, for the reason given in 001: nothing queries inside it, and the caller gets back the
-- object it sent, keys in its own order.
CREATE TABLE api_asks (
  ask_id TEXT COLLATE "C" PRIMARY KEY,
  token TEXT COLLATE "C" NOT NULL,
  idempotency_key TEXT COLLATE "C",
  request_hash TEXT NOT NULL,
  metadata TEXT,
  callback_url TEXT,
  callback_attempts INTEGER NOT NULL DEFAULT 0,
  callback_next_at BIGINT,
  callback_done_at BIGINT,
  callback_outcome TEXT
);
-- Also what makes two concurrent retries of one request create a single ask: the second insert waits for the first
-- to commit, then fails, and the store answers it with the first one's record.
CREATE UNIQUE INDEX api_asks_idempotency ON api_asks (token, idempotency_key) WHERE idempotency_key IS NOT NULL;
-- The sweeper's read of owed callbacks: few rows, since delivered ones leave the index.
CREATE INDEX api_asks_callbacks_owed ON api_asks (callback_next_at) WHERE callback_url IS NOT NULL AND callback_done_at IS NULL;

-- Tokens admins created with /parley tokens create: the SHA-256 of the secret, never the secret. A name is one
-- token's for ever (asks belong to the name): a revoked token stays, so its name is never handed to another.
CREATE TABLE api_tokens (
  name TEXT COLLATE "C" NOT NULL,
  secret_hash TEXT NOT NULL,
  created_by TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  revoked_at BIGINT,
  PRIMARY KEY (name)
);
