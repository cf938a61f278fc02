-- Categories (beta): the name a storefront shows for a pet's categoryId. A category's id is the int64 its pets
-- carry, chosen by the client (PUT /v1/categories/{id}); a pet's categoryId needs no record here.
CREATE TABLE categories (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE
);

-- The pets' counts by category and status, kept by triggers in the transaction of every change of pets (as
-- pet_counts is), so a page of categories reads its counts, never counts pets. Owned by pets: categories ask pets.
-- A row stays at 0 when its last pet leaves; readers skip such rows.
CREATE TABLE pet_category_counts (
  category_id INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('available', 'pending', 'sold')),
  pets INTEGER NOT NULL CHECK (pets >= 0),
  PRIMARY KEY (category_id, status)
) WITHOUT ROWID;

INSERT INTO pet_category_counts (category_id, status, pets)
SELECT category_id, status, COUNT(*) FROM pets GROUP BY category_id, status;

CREATE TRIGGER pet_category_counts_insert AFTER INSERT ON pets BEGIN
  INSERT INTO pet_category_counts (category_id, status, pets) VALUES (NEW.category_id, NEW.status, 1)
    ON CONFLICT (category_id, status) DO UPDATE SET pets = pets + 1;
END;

CREATE TRIGGER pet_category_counts_update AFTER UPDATE OF category_id, status ON pets
  WHEN OLD.category_id <> NEW.category_id OR OLD.status <> NEW.status BEGIN
  UPDATE pet_category_counts SET pets = pets - 1 WHERE category_id = OLD.category_id AND status = OLD.status;
  INSERT INTO pet_category_counts (category_id, status, pets) VALUES (NEW.category_id, NEW.status, 1)
    ON CONFLICT (category_id, status) DO UPDATE SET pets = pets + 1;
END;

CREATE TRIGGER pet_category_counts_delete AFTER DELETE ON pets BEGIN
  UPDATE pet_category_counts SET pets = pets - 1 WHERE category_id = OLD.category_id AND status = OLD.status;
END;
