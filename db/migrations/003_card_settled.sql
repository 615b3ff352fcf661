-- When an ended ask's card was updated to show its ending. Start-up re-settles only ended asks without it,
-- instead of every ask that ended in the last hour.
ALTER TABLE asks ADD COLUMN settled_at INTEGER;

-- Existing databases: asks that ended over an hour ago were outside the old re-settle window and count as
-- settled; the last hour's stay unrecorded, so the first start re-settles them once, as it always did.
UPDATE asks SET settled_at = ended_at
WHERE status != 'pending' AND ended_at < CAST(strftime('%s', 'now') AS INTEGER) * 1000 - 3600000;

-- Recovery's read: the few ended asks whose settle is not recorded.
CREATE INDEX asks_unsettled_by_end ON asks (ended_at) WHERE settled_at IS NULL AND status != 'pending' AND card_ref IS NOT NULL;
