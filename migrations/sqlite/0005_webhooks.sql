-- Webhook endpoints the operator registered (npx petstore webhooks …). Times are milliseconds since the
-- epoch. scheduled_through: the events up to this id have had their deliveries created (an endpoint
-- starts at the newest event when it is added: only later events are sent to it). lease_*: the instance
-- delivering to this endpoint now (one at a time, so deliveries to one endpoint go in id order);
-- a lease that a dead instance held runs out and another instance takes the endpoint over.
CREATE TABLE webhook_endpoints (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  url TEXT NOT NULL,
  -- comma-separated event types
  event_types TEXT NOT NULL,
  secret TEXT NOT NULL,
  -- after a rotation, the old secret also signs until previous_secret_until
  previous_secret TEXT,
  previous_secret_until INTEGER,
  created_at INTEGER NOT NULL,
  disabled_at INTEGER,
  scheduled_through INTEGER NOT NULL,
  lease_token TEXT,
  lease_until INTEGER,
  last_success_at INTEGER,
  last_failure_at INTEGER,
  last_failure TEXT,
  -- the first failure since the last success: an endpoint failing for 3 days is disabled
  failing_since INTEGER
);

-- One row per event to send to an endpoint, until it is delivered (then deleted) or given up (failed_at).
CREATE TABLE webhook_deliveries (
  endpoint_id INTEGER NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_id INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  failed_at INTEGER,
  last_error TEXT,
  PRIMARY KEY (endpoint_id, event_id)
);
