-- Store orders. A pet has at most one open order (placed or approved): the partial unique index
-- refuses a second one whatever the code above it does, on every instance.
CREATE TABLE orders (
  id bigint GENERATED ALWAYS AS IDENTITY (MAXVALUE 9007199254740991) PRIMARY KEY,
  pet_id bigint NOT NULL REFERENCES pets (id),
  status text NOT NULL CHECK (status IN ('placed', 'approved', 'delivered', 'cancelled')),
  placed_at timestamptz NOT NULL
);

CREATE UNIQUE INDEX orders_one_open_per_pet ON orders (pet_id) WHERE status IN ('placed', 'approved');
-- serve the lists filtered by status or by pet in id order without a sort; the unfiltered list walks the primary key
CREATE INDEX orders_status_id ON orders (status, id);
CREATE INDEX orders_pet_id_id ON orders (pet_id, id);

-- The inventory: the number of pets in each status, kept by statement triggers in the transaction of
-- every change of pets (one update per statement, also for a batch of creates), so reading it is three
-- rows, never a count of pets. Every writer of pets already holds the changes lock (they record events),
-- so these rows add no waiting of their own.
CREATE TABLE pet_counts (
  status text PRIMARY KEY CHECK (status IN ('available', 'pending', 'sold')),
  pets bigint NOT NULL CHECK (pets >= 0)
);

INSERT INTO pet_counts (status, pets)
SELECT s.status, (SELECT count(*) FROM pets WHERE pets.status = s.status)
FROM (VALUES ('available'), ('pending'), ('sold')) AS s (status);

CREATE FUNCTION pet_counts_apply () RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    UPDATE pet_counts AS c SET pets = c.pets + d.n
    FROM (SELECT status, count(*) AS n FROM new_pets GROUP BY status) AS d WHERE c.status = d.status;
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE pet_counts AS c SET pets = c.pets - d.n
    FROM (SELECT status, count(*) AS n FROM old_pets GROUP BY status) AS d WHERE c.status = d.status;
  ELSE
    UPDATE pet_counts AS c SET pets = c.pets + d.n
    FROM (
      SELECT status, sum(n) AS n FROM (
        SELECT status, 1 AS n FROM new_pets UNION ALL SELECT status, -1 AS n FROM old_pets
      ) AS moves GROUP BY status HAVING sum(n) <> 0
    ) AS d WHERE c.status = d.status;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER pet_counts_insert AFTER INSERT ON pets REFERENCING NEW TABLE AS new_pets
  FOR EACH STATEMENT EXECUTE FUNCTION pet_counts_apply();
CREATE TRIGGER pet_counts_update AFTER UPDATE ON pets REFERENCING OLD TABLE AS old_pets NEW TABLE AS new_pets
  FOR EACH STATEMENT EXECUTE FUNCTION pet_counts_apply();
CREATE TRIGGER pet_counts_delete AFTER DELETE ON pets REFERENCING OLD TABLE AS old_pets
  FOR EACH STATEMENT EXECUTE FUNCTION pet_counts_apply();

-- the feed carries the order events too
ALTER TABLE events DROP CONSTRAINT events_type_check;
ALTER TABLE events ADD CONSTRAINT events_type_check CHECK (type IN ('pet.created', 'pet.updated', 'order.created', 'order.updated'));
ALTER TABLE event_retention DROP CONSTRAINT event_retention_type_check;
ALTER TABLE event_retention ADD CONSTRAINT event_retention_type_check CHECK (type IN ('pet.created', 'pet.updated', 'order.created', 'order.updated'));
