-- The change feed (a transactional outbox): one row per change of a pet, written in the transaction
-- of the change itself, so the pet and its event exist together or not at all. AUTOINCREMENT: an id
-- is never reused, even after retention deleted the newest events, so ids only ever increase.
-- SQLite has one writer at a time, so ids are drawn (and committed) in commit order.
CREATE TABLE events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  type TEXT NOT NULL CHECK (type IN ('pet.created', 'pet.updated')),
  -- milliseconds since the epoch
  occurred_at INTEGER NOT NULL,
  -- the event's `data` object, as JSON text
  data TEXT NOT NULL
);

-- serves the feed filtered by type in id order; the unfiltered feed walks the primary key
CREATE INDEX events_type_id ON events (type, id);

-- Retention deletes the oldest events (a prefix of the ids); purged_through is, per type, the highest
-- id it ever deleted, so a reader asking for events (of that type) after an older id is told they are
-- gone (410), and a reader of one type is not told so because events of another type were deleted.
CREATE TABLE event_retention (
  type TEXT PRIMARY KEY CHECK (type IN ('pet.created', 'pet.updated')),
  purged_through INTEGER NOT NULL
);
