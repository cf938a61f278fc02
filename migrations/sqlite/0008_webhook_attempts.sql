-- Every webhook delivery attempt, for `npx petstore webhooks deliveries`: a delivery row keeps only its
-- latest error, and is deleted once delivered, but an operator asks what each attempt came to. Written
-- in the transaction that records the attempt. attempted_at: when it was sent (ms since the epoch);
-- error NULL: delivered; next_attempt_at NULL with an error: given up. Kept as long as its event: the
-- trigger deletes an event's attempts with it (retention deletes a prefix of the ids, so every attempt
-- up to the deleted id goes, also one recorded after its event was deleted), and with its endpoint.
CREATE TABLE webhook_attempts (
  id INTEGER PRIMARY KEY,
  endpoint_id INTEGER NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_id INTEGER NOT NULL,
  -- 1 for the first attempt (counted again from 1 after `webhooks retry`)
  attempt INTEGER NOT NULL,
  attempted_at INTEGER NOT NULL,
  duration_ms INTEGER NOT NULL,
  -- the receiver's status, when it answered
  status INTEGER,
  error TEXT,
  next_attempt_at INTEGER
);

-- an endpoint's attempts, newest first
CREATE INDEX webhook_attempts_endpoint ON webhook_attempts (endpoint_id, id);
-- retention's deletes
CREATE INDEX webhook_attempts_event ON webhook_attempts (event_id);

CREATE TRIGGER webhook_attempts_retention AFTER DELETE ON events BEGIN
  DELETE FROM webhook_attempts WHERE event_id <= OLD.id;
END;
