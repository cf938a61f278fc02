-- Webhook endpoints the operator registered (npx petstore webhooks …). Times are milliseconds since the
-- epoch. scheduled_through: the events up to this id have had their deliveries created (an endpoint
-- starts at the newest event when it is added: only later events are sent to it). lease_*: the instance
-- delivering to this endpoint now (one at a time, so deliveries to one endpoint go in id order);
-- a lease that a dead instance held runs out and another instance takes the endpoint over.
CREATE TABLE webhook_endpoints (
  id bigint GENERATED ALWAYS AS IDENTITY (MAXVALUE 9007199254740991) PRIMARY KEY,
  name text NOT NULL,
  url text NOT NULL,
  -- comma-separated event types
  event_types text NOT NULL,
  secret text NOT NULL,
  -- after a rotation, the old secret also signs until previous_secret_until
  previous_secret text,
  previous_secret_until bigint,
  created_at bigint NOT NULL,
  disabled_at bigint,
  scheduled_through bigint NOT NULL,
  lease_token text,
  lease_until bigint,
  last_success_at bigint,
  last_failure_at bigint,
  last_failure text,
  -- the first failure since the last success: an endpoint failing for 3 days is disabled
  failing_since bigint
);

-- One row per event to send to an endpoint, until it is delivered (then deleted) or given up (failed_at).
CREATE TABLE webhook_deliveries (
  endpoint_id bigint NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_id bigint NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at bigint NOT NULL,
  failed_at bigint,
  last_error text,
  PRIMARY KEY (endpoint_id, event_id)
);
