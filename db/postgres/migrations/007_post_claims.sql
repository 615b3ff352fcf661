-- Who posts a card or a final answer now, and until when: the process that wrote the row claims it with the row, and
-- a start or a sweep in another process posts only what nobody alive is posting (a post in flight cannot be looked
-- for yet, so posting it again would show it twice).
ALTER TABLE asks ADD COLUMN post_owner TEXT;
ALTER TABLE asks ADD COLUMN post_until BIGINT;
ALTER TABLE pending_replies ADD COLUMN post_owner TEXT;
ALTER TABLE pending_replies ADD COLUMN post_until BIGINT;
