-- Idempotency-Key records of POST /v1/pets, per API key (scope). A row is in flight while
-- `token` is set (the claim of the request processing it), and completed once the pet and its
-- answer are stored, in the same transaction as the pet. Times are milliseconds since the epoch.
CREATE TABLE idempotency_keys (
  scope TEXT NOT NULL,
  key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  token TEXT,
  locked_until INTEGER,
  response_status INTEGER,
  response_body TEXT,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (scope, key)
) WITHOUT ROWID;

-- the clean-up deletes by expiry
CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at);
