-- The PostgreSQL twin of db/migrations/001_init.sql: same tables, columns and indexes, same rules.
-- Times are BIGINT milliseconds since the epoch (what the port passes around), not timestamptz: no conversion
-- on the hot path and the same values as SQLite. Counters and token totals are BIGINT too: usage is cumulative.
-- Stored JSON (message content, ask spec, sibling results, answer) is TEXT, not JSONB: nothing queries inside it,
-- JSONB reorders keys and would break the byte-identical history the model's prompt cache keys on, and the
-- row guards in records.ts read it as text. Ids and keys are COLLATE "C": byte order like SQLite, whatever the
-- database's default collation, and cheaper comparisons.
--
-- Sessions are updated on every step. Their only indexes are on id and conversation_key, which never change,
-- so those updates are HOT (no index writes) as long as the page has room: hence fillfactor 70.

-- Sessions: one row per thread. Counters are per turn; usage is cumulative.
CREATE TABLE sessions (
  id TEXT COLLATE "C" PRIMARY KEY,
  v INTEGER NOT NULL,
  conversation_key TEXT COLLATE "C" NOT NULL UNIQUE,
  platform TEXT NOT NULL,
  workspace TEXT NOT NULL,
  channel TEXT NOT NULL,
  thread TEXT NOT NULL,
  owner_id TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('idle', 'running', 'waiting', 'failed')),
  last_outcome TEXT,
  last_error TEXT,
  turn_count INTEGER NOT NULL DEFAULT 0,
  turn_asks INTEGER NOT NULL DEFAULT 0,
  turn_iterations INTEGER NOT NULL DEFAULT 0,
  recovery_attempts INTEGER NOT NULL DEFAULT 0,
  stop_requested BOOLEAN NOT NULL DEFAULT FALSE,
  message_count INTEGER NOT NULL DEFAULT 0,
  input_tokens BIGINT NOT NULL DEFAULT 0,
  output_tokens BIGINT NOT NULL DEFAULT 0,
  cache_read_tokens BIGINT NOT NULL DEFAULT 0,
  cache_write_tokens BIGINT NOT NULL DEFAULT 0,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
) WITH (fillfactor = 70);

-- Append-only history: a step inserts only its new rows.
CREATE TABLE messages (
  session_id TEXT COLLATE "C" NOT NULL,
  seq INTEGER NOT NULL,
  v INTEGER NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
  content TEXT NOT NULL,
  PRIMARY KEY (session_id, seq)
);

CREATE TABLE asks (
  id TEXT COLLATE "C" PRIMARY KEY,
  v INTEGER NOT NULL,
  session_id TEXT COLLATE "C" NOT NULL,
  tool_use_id TEXT NOT NULL,
  spec TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'answered', 'cancelled', 'expired')),
  sibling_results TEXT NOT NULL,
  card_ref TEXT,
  deadline BIGINT NOT NULL,
  answer TEXT,
  answered_by TEXT,
  created_at BIGINT NOT NULL,
  ended_at BIGINT
);
-- The sweeper's index; unposted cards are found through it too (pending asks are few).
CREATE INDEX asks_pending_by_deadline ON asks (deadline) WHERE status = 'pending';
CREATE INDEX asks_by_session ON asks (session_id);

-- Messages that arrived while a turn ran; they start the next turn.
CREATE TABLE queued_messages (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  session_id TEXT COLLATE "C" NOT NULL,
  v INTEGER NOT NULL,
  content TEXT NOT NULL
);
CREATE INDEX queued_by_session ON queued_messages (session_id, id);

-- Platform event ids already handled (retries and duplicate deliveries).
CREATE TABLE processed_events (
  event_id TEXT COLLATE "C" PRIMARY KEY,
  at BIGINT NOT NULL
);

CREATE TABLE audit (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at BIGINT NOT NULL,
  actor TEXT NOT NULL,
  action TEXT NOT NULL,
  target TEXT NOT NULL,
  outcome TEXT NOT NULL
);

-- Runtime settings changed by admins (/parley config).
CREATE TABLE settings (
  key TEXT COLLATE "C" PRIMARY KEY,
  value TEXT NOT NULL
);
