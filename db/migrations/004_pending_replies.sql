-- A turn's final answer, written in the transaction that ends the turn and deleted once it is posted: a crash
-- between the two leaves the row, and start-up posts it (looking first for a copy that did go out).
CREATE TABLE pending_replies (
  key TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  text TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
