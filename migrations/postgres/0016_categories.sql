-- Categories (beta): the name a storefront shows for a pet's categoryId. A category's id is the int64 its pets
-- carry, chosen by the client (PUT /v1/categories/{id}); a pet's categoryId needs no record here.
CREATE TABLE categories (
  id bigint PRIMARY KEY,
  name text NOT NULL UNIQUE
);

-- The pets' counts by category and status, kept by statement triggers in the transaction of every change of pets
-- (as pet_counts is), so a page of categories reads its counts, never counts pets. Owned by pets: categories ask
-- pets. Every writer of pets holds the changes lock, so these rows add no waiting of their own. A row stays at 0
-- when its last pet leaves; readers skip such rows.
CREATE TABLE pet_category_counts (
  category_id bigint NOT NULL,
  status text NOT NULL CHECK (status IN ('available', 'pending', 'sold')),
  pets bigint NOT NULL CHECK (pets >= 0),
  PRIMARY KEY (category_id, status)
);

INSERT INTO pet_category_counts (category_id, status, pets)
SELECT category_id, status, count(*) FROM pets GROUP BY category_id, status;

CREATE FUNCTION pet_category_counts_apply () RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO pet_category_counts AS c (category_id, status, pets)
    SELECT category_id, status, count(*) FROM new_pets GROUP BY category_id, status ORDER BY category_id, status
    ON CONFLICT (category_id, status) DO UPDATE SET pets = c.pets + EXCLUDED.pets;
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE pet_category_counts AS c SET pets = c.pets - d.n
    FROM (SELECT category_id, status, count(*) AS n FROM old_pets GROUP BY category_id, status) AS d
    WHERE c.category_id = d.category_id AND c.status = d.status;
  ELSE
    -- what a pet left is taken away, what it joined added (a new row must pass the CHECK, so only additions insert)
    UPDATE pet_category_counts AS c SET pets = c.pets + d.n
    FROM (
      SELECT category_id, status, sum(n) AS n FROM (
        SELECT category_id, status, 1 AS n FROM new_pets UNION ALL SELECT category_id, status, -1 AS n FROM old_pets
      ) AS moves GROUP BY category_id, status HAVING sum(n) < 0
    ) AS d WHERE c.category_id = d.category_id AND c.status = d.status;
    INSERT INTO pet_category_counts AS c (category_id, status, pets)
    SELECT category_id, status, sum(n) FROM (
      SELECT category_id, status, 1 AS n FROM new_pets UNION ALL SELECT category_id, status, -1 AS n FROM old_pets
    ) AS moves GROUP BY category_id, status HAVING sum(n) > 0 ORDER BY category_id, status
    ON CONFLICT (category_id, status) DO UPDATE SET pets = c.pets + EXCLUDED.pets;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER pet_category_counts_insert AFTER INSERT ON pets REFERENCING NEW TABLE AS new_pets
  FOR EACH STATEMENT EXECUTE FUNCTION pet_category_counts_apply();
CREATE TRIGGER pet_category_counts_update AFTER UPDATE ON pets REFERENCING OLD TABLE AS old_pets NEW TABLE AS new_pets
  FOR EACH STATEMENT EXECUTE FUNCTION pet_category_counts_apply();
CREATE TRIGGER pet_category_counts_delete AFTER DELETE ON pets REFERENCING OLD TABLE AS old_pets
  FOR EACH STATEMENT EXECUTE FUNCTION pet_category_counts_apply();
