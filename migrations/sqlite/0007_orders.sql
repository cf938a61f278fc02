-- Store orders. A pet has at most one open order (placed or approved): the partial unique index
-- refuses a second one whatever the code above it does. Times are milliseconds since the epoch.
CREATE TABLE orders (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  pet_id INTEGER NOT NULL REFERENCES pets (id),
  status TEXT NOT NULL CHECK (status IN ('placed', 'approved', 'delivered', 'cancelled')),
  placed_at INTEGER NOT NULL
);

CREATE UNIQUE INDEX orders_one_open_per_pet ON orders (pet_id) WHERE status IN ('placed', 'approved');
-- serve the lists filtered by status or by pet in id order without a sort; the unfiltered list walks the primary key
CREATE INDEX orders_status_id ON orders (status, id);
CREATE INDEX orders_pet_id_id ON orders (pet_id, id);

-- The inventory: the number of pets in each status, kept by triggers in the transaction of every
-- change of pets (whichever statement makes it), so reading it is three rows, never a count of pets.
CREATE TABLE pet_counts (
  status TEXT PRIMARY KEY CHECK (status IN ('available', 'pending', 'sold')),
  pets INTEGER NOT NULL CHECK (pets >= 0)
) WITHOUT ROWID;

INSERT INTO pet_counts (status, pets)
SELECT s.status, (SELECT COUNT(*) FROM pets WHERE pets.status = s.status)
FROM (SELECT 'available' AS status UNION ALL SELECT 'pending' UNION ALL SELECT 'sold') AS s;

CREATE TRIGGER pet_counts_insert AFTER INSERT ON pets BEGIN
  UPDATE pet_counts SET pets = pets + 1 WHERE status = NEW.status;
END;

CREATE TRIGGER pet_counts_update AFTER UPDATE OF status ON pets WHEN OLD.status <> NEW.status BEGIN
  UPDATE pet_counts SET pets = pets - 1 WHERE status = OLD.status;
  UPDATE pet_counts SET pets = pets + 1 WHERE status = NEW.status;
END;

CREATE TRIGGER pet_counts_delete AFTER DELETE ON pets BEGIN
  UPDATE pet_counts SET pets = pets - 1 WHERE status = OLD.status;
END;

-- The feed carries the order events too. SQLite cannot change a CHECK in place, so the events table is
-- rebuilt (https://www.sqlite.org/lang_altertable.html#otheralter), keeping its AUTOINCREMENT counter:
-- an id is never reused, even one retention deleted.
CREATE TABLE events_new (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  type TEXT NOT NULL CHECK (type IN ('pet.created', 'pet.updated', 'order.created', 'order.updated')),
  occurred_at INTEGER NOT NULL,
  data TEXT NOT NULL
);
INSERT INTO events_new (id, type, occurred_at, data) SELECT id, type, occurred_at, data FROM events;
DELETE FROM sqlite_sequence WHERE name = 'events_new';
INSERT INTO sqlite_sequence (name, seq) SELECT 'events_new', seq FROM sqlite_sequence WHERE name = 'events';
DROP TABLE events;
ALTER TABLE events_new RENAME TO events;
CREATE INDEX events_type_id ON events (type, id);

CREATE TABLE event_retention_new (
  type TEXT PRIMARY KEY CHECK (type IN ('pet.created', 'pet.updated', 'order.created', 'order.updated')),
  purged_through INTEGER NOT NULL
);
INSERT INTO event_retention_new (type, purged_through) SELECT type, purged_through FROM event_retention;
DROP TABLE event_retention;
ALTER TABLE event_retention_new RENAME TO event_retention;
