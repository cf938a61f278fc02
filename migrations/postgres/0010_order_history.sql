-- What an order keeps of its story: when it reached each status after `placed` (NULL until then, and for
-- orders moved before these columns), why it was cancelled, and the client's own metadata (an object of
-- strings, keys and limits checked by the service). Adding nullable columns and one with a constant
-- default rewrites no rows.
ALTER TABLE orders
  ADD COLUMN approved_at timestamptz,
  ADD COLUMN delivered_at timestamptz,
  ADD COLUMN cancelled_at timestamptz,
  ADD COLUMN cancellation_reason text,
  ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}';
