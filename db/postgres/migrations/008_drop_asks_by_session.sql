-- asks_by_tool_use (session_id, tool_use_id) answers every read by session that asks_by_session did: the narrower index
-- was one more page written with every new ask, for nothing.
DROP INDEX asks_by_session;
