-- What an order keeps of its story: when it reached each status after `placed` (ms since the epoch, NULL
-- until then, and for orders moved before these columns), why it was cancelled, and the client's own
-- metadata (a JSON object of strings, keys and limits checked by the service).
ALTER TABLE orders ADD COLUMN approved_at INTEGER;
ALTER TABLE orders ADD COLUMN delivered_at INTEGER;
ALTER TABLE orders ADD COLUMN cancelled_at INTEGER;
ALTER TABLE orders ADD COLUMN cancellation_reason TEXT;
ALTER TABLE orders ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}';
