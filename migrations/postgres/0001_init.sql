-- pets: ids come from the database, so instances never collide. The sequence stops at 2^53 - 1,
-- so every id is exactly representable as a JavaScript number
CREATE TABLE pets (
  id bigint GENERATED ALWAYS AS IDENTITY (MAXVALUE 9007199254740991) PRIMARY KEY,
  name text NOT NULL,
  category_id bigint NOT NULL,
  status text NOT NULL CHECK (status IN ('available', 'pending', 'sold'))
);

-- serves the status-filtered list in id order without a sort; the unfiltered list walks the primary key
CREATE INDEX pets_status_id ON pets (status, id);

CREATE TABLE api_keys (
  id bigint GENERATED ALWAYS AS IDENTITY (MAXVALUE 9007199254740991) PRIMARY KEY,
  name text NOT NULL,
  key_hash text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL,
  last_used_at timestamptz,
  revoked_at timestamptz
);

CREATE TABLE settings (
  name text PRIMARY KEY,
  value text NOT NULL
);
