-- The change feed (a transactional outbox): one row per change of a pet, written in the transaction
-- of the change itself, so the pet and its event exist together or not at all. An identity alone
-- does not give ids in commit order (a transaction that drew a smaller id may commit later), so every
-- transaction that writes an event draws its id under the changes advisory lock, held until commit
-- (src/store/postgres/sql.ts, docs/architecture.md): ids increase in commit order.
CREATE TABLE events (
  id bigint GENERATED ALWAYS AS IDENTITY (MAXVALUE 9007199254740991) PRIMARY KEY,
  type text NOT NULL CHECK (type IN ('pet.created', 'pet.updated')),
  occurred_at timestamptz NOT NULL,
  -- the event's `data` object
  data json NOT NULL
);

-- serves the feed filtered by type in id order; the unfiltered feed walks the primary key
CREATE INDEX events_type_id ON events (type, id);

-- Retention deletes the oldest events (a prefix of the ids); purged_through is, per type, the highest
-- id it ever deleted, so a reader asking for events (of that type) after an older id is told they are
-- gone (410), and a reader of one type is not told so because events of another type were deleted.
CREATE TABLE event_retention (
  type text PRIMARY KEY CHECK (type IN ('pet.created', 'pet.updated')),
  purged_through bigint NOT NULL
);
