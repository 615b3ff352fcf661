-- Who runs a session's turn now, and until when: a process takes the lease before running a turn, renews it while
-- the turn runs and drops it when the turn stops; another process takes over a lease that expired (its holder died).
ALTER TABLE sessions ADD COLUMN lease_owner TEXT;
ALTER TABLE sessions ADD COLUMN lease_until BIGINT;

-- The sweeper looks for running turns nobody holds every few seconds: a partial index keeps that read small.
CREATE INDEX sessions_running ON sessions (updated_at) WHERE status = 'running';
