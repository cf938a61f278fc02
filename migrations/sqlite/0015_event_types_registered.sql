-- The feed carries whatever event types the capabilities register (events/event-types.ts): the list of types
-- leaves the CHECKs, which now hold only the shape of a type name (`pet.created`), so a new producer needs no
-- change of the events tables. SQLite cannot change a CHECK in place, so both tables are rebuilt
-- (https://www.sqlite.org/lang_altertable.html#otheralter), keeping the AUTOINCREMENT counter (an id is never
-- reused, even one retention deleted) and the webhooks' retention trigger, which dropping the table drops.
CREATE TABLE events_new (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  type TEXT NOT NULL CHECK (type GLOB '[a-z]*.[a-z]*' AND length(type) <= 100),
  occurred_at INTEGER NOT NULL,
  data TEXT NOT NULL
);
INSERT INTO events_new (id, type, occurred_at, data) SELECT id, type, occurred_at, data FROM events;
DELETE FROM sqlite_sequence WHERE name = 'events_new';
INSERT INTO sqlite_sequence (name, seq) SELECT 'events_new', seq FROM sqlite_sequence WHERE name = 'events';
DROP TABLE events;
ALTER TABLE events_new RENAME TO events;
CREATE INDEX events_type_id ON events (type, id);

CREATE TRIGGER webhook_attempts_retention AFTER DELETE ON events BEGIN
  DELETE FROM webhook_attempts WHERE event_id <= OLD.id;
END;

CREATE TABLE event_retention_new (
  type TEXT PRIMARY KEY CHECK (type GLOB '[a-z]*.[a-z]*' AND length(type) <= 100),
  purged_through INTEGER NOT NULL
);
INSERT INTO event_retention_new (type, purged_through) SELECT type, purged_through FROM event_retention;
DROP TABLE event_retention;
ALTER TABLE event_retention_new RENAME TO event_retention;
