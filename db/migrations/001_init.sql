-- Every page a commit touches is a WAL write on the hot path (a resume or a suspend), so the tables are
-- WITHOUT ROWID keyed by their ids, and no index carries a column that changes on every step (status,
-- timestamps, card reference). Admin listings and the start-up scan of running sessions read the sessions
-- table directly: rare, and still milliseconds at 100k rows.

-- Sessions: one row per thread. Counters are per turn; usage is cumulative.
CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  v INTEGER NOT NULL,
  conversation_key TEXT NOT NULL UNIQUE,
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
  stop_requested INTEGER NOT NULL DEFAULT 0,
  message_count INTEGER NOT NULL DEFAULT 0,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  cache_read_tokens INTEGER NOT NULL DEFAULT 0,
  cache_write_tokens INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) WITHOUT ROWID;

-- Append-only history: a step inserts only its new rows.
CREATE TABLE messages (
  session_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  v INTEGER NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
  content TEXT NOT NULL,
  PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;

CREATE TABLE asks (
  id TEXT PRIMARY KEY,
  v INTEGER NOT NULL,
  session_id TEXT NOT NULL,
  tool_use_id TEXT NOT NULL,
  spec TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'answered', 'cancelled', 'expired')),
  sibling_results TEXT NOT NULL,
  card_ref TEXT,
  deadline INTEGER NOT NULL,
  answer TEXT,
  answered_by TEXT,
  created_at INTEGER NOT NULL,
  ended_at INTEGER
) WITHOUT ROWID;
-- The sweeper's index; unposted cards are found through it too (pending asks are few).
CREATE INDEX asks_pending_by_deadline ON asks (deadline) WHERE status = 'pending';
CREATE INDEX asks_by_session ON asks (session_id);

-- Messages that arrived while a turn ran; they start the next turn.
CREATE TABLE queued_messages (
  id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL,
  v INTEGER NOT NULL,
  content TEXT NOT NULL
);
CREATE INDEX queued_by_session ON queued_messages (session_id, id);

-- Platform event ids already handled (retries and duplicate deliveries).
CREATE TABLE processed_events (
  event_id TEXT PRIMARY KEY,
  at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE audit (
  id INTEGER PRIMARY KEY,
  at INTEGER NOT NULL,
  actor TEXT NOT NULL,
  action TEXT NOT NULL,
  target TEXT NOT NULL,
  outcome TEXT NOT NULL
);

-- Runtime settings changed by admins (/parley config).
CREATE TABLE settings (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
