-- A third role, admin: every operation, the admin-only ones too (managing webhook endpoints). SQLite cannot
-- change a CHECK in place, so api_keys is rebuilt (https://www.sqlite.org/lang_altertable.html#otheralter)
-- with its columns in their order, every key with its id, and its AUTOINCREMENT counter: an id is never reused,
-- and no index or trigger is on it besides its primary key and the unique key_hash, recreated with it.
CREATE TABLE api_keys_new (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  key_hash TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL,
  last_used_at TEXT,
  revoked_at TEXT,
  role TEXT NOT NULL DEFAULT 'write' CHECK (role IN ('read', 'write', 'admin'))
);
INSERT INTO api_keys_new (id, name, key_hash, created_at, last_used_at, revoked_at, role)
  SELECT id, name, key_hash, created_at, last_used_at, revoked_at, role FROM api_keys;
DELETE FROM sqlite_sequence WHERE name = 'api_keys_new';
INSERT INTO sqlite_sequence (name, seq) SELECT 'api_keys_new', seq FROM sqlite_sequence WHERE name = 'api_keys';
DROP TABLE api_keys;
ALTER TABLE api_keys_new RENAME TO api_keys;
