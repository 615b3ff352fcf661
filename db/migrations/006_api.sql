-- Asks other programs put through the HTTP API or the MCP server (DESIGN §12): the ask itself is a row of asks like
-- any other; this row keeps what only the API needs. Its callback columns are the outbox: an ended ask whose
-- callback_done_at is NULL is owed a delivery, so an end committed just before a crash is still delivered.
CREATE TABLE api_asks (
  ask_id TEXT PRIMARY KEY,
  token TEXT NOT NULL,
  idempotency_key TEXT,
  request_hash TEXT NOT NULL,
  metadata TEXT,
  callback_url TEXT,
  callback_attempts INTEGER NOT NULL DEFAULT 0,
  callback_next_at INTEGER,
  callback_done_at INTEGER,
  callback_outcome TEXT
) WITHOUT ROWID;
CREATE UNIQUE INDEX api_asks_idempotency ON api_asks (token, idempotency_key) WHERE idempotency_key IS NOT NULL;
-- The sweeper's read of owed callbacks: few rows, since delivered ones leave the index.
CREATE INDEX api_asks_callbacks_owed ON api_asks (callback_next_at) WHERE callback_url IS NOT NULL AND callback_done_at IS NULL;

-- Tokens admins created with /parley tokens create: the SHA-256 of the secret, never the secret. A name is one
-- token's for ever (asks belong to the name): a revoked token stays, so its name is never handed to another.
CREATE TABLE api_tokens (
  name TEXT NOT NULL,
  secret_hash TEXT NOT NULL,
  created_by TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  revoked_at INTEGER,
  PRIMARY KEY (name)
) WITHOUT ROWID;
