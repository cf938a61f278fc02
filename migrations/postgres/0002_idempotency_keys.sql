-- Idempotency-Key records of POST /v1/pets, per API key (scope). A row is in flight while
-- `token` is set (the claim of the request processing it), and completed once the pet and its
-- answer are stored, in the same transaction as the pet.
CREATE TABLE idempotency_keys (
  scope text NOT NULL,
  key text NOT NULL,
  fingerprint text NOT NULL,
  token text,
  locked_until timestamptz,
  response_status integer,
  response_body text,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (scope, key)
);

-- the clean-up deletes by expiry
CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at);
