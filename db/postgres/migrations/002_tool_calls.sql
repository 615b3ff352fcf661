-- The tool-call journal (at most once): a row is written `started` before a call leaves, and `finished` with
-- the tool_result the model reads. After a crash, a started row without a result is never sent again.
CREATE TABLE tool_calls (
  session_id TEXT COLLATE "C" NOT NULL,
  tool_use_id TEXT COLLATE "C" NOT NULL,
  v INTEGER NOT NULL,
  name TEXT NOT NULL,
  arguments_hash TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('started', 'finished')),
  result TEXT,
  started_at BIGINT NOT NULL,
  finished_at BIGINT,
  PRIMARY KEY (session_id, tool_use_id)
);

-- An approval is found by the tool call it decides.
CREATE INDEX asks_by_tool_use ON asks (session_id, tool_use_id);
