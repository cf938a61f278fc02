-- Every webhook delivery attempt, for `npx petstore webhooks deliveries`: a delivery row keeps only its
-- latest error, and is deleted once delivered, but an operator asks what each attempt came to. Written
-- in the transaction that records the attempt. attempted_at: when it was sent (ms since the epoch);
-- error NULL: delivered; next_attempt_at NULL with an error: given up. Kept as long as its event: the
-- trigger deletes an event's attempts with it (retention deletes a prefix of the ids, so every attempt
-- up to the deleted ids goes, also one recorded after its event was deleted), and with its endpoint.
CREATE TABLE webhook_attempts (
  id bigint GENERATED ALWAYS AS IDENTITY (MAXVALUE 9007199254740991) PRIMARY KEY,
  endpoint_id bigint NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_id bigint NOT NULL,
  -- 1 for the first attempt (counted again from 1 after `webhooks retry`)
  attempt integer NOT NULL,
  attempted_at bigint NOT NULL,
  duration_ms integer NOT NULL,
  -- the receiver's status, when it answered
  status integer,
  error text,
  next_attempt_at bigint
);

-- an endpoint's attempts, newest first
CREATE INDEX webhook_attempts_endpoint ON webhook_attempts (endpoint_id, id);
-- retention's deletes
CREATE INDEX webhook_attempts_event ON webhook_attempts (event_id);

-- one statement a purge batch, not one a deleted event
CREATE FUNCTION webhook_attempts_retention () RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM webhook_attempts WHERE event_id <= (SELECT max(id) FROM purged_events);
  RETURN NULL;
END
$$;

CREATE TRIGGER webhook_attempts_retention AFTER DELETE ON events REFERENCING OLD TABLE AS purged_events
  FOR EACH STATEMENT EXECUTE FUNCTION webhook_attempts_retention();
