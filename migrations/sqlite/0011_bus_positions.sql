-- Each message bus the events are relayed to (NATS JetStream, RabbitMQ; src/capabilities/buses/), one row
-- per bus, created when an instance first runs with it configured. Times are milliseconds since the epoch.
-- published_through: every event up to this id was acknowledged by the broker (a new bus starts at the
-- newest event: only later events are published). lease_*: the instance publishing now, one at a time so
-- events go out in id order; a dead instance's lease runs out and another takes the bus over.
CREATE TABLE bus_positions (
  bus TEXT PRIMARY KEY,
  published_through INTEGER NOT NULL,
  published_at INTEGER,
  lease_token TEXT,
  lease_holder TEXT,
  lease_until INTEGER,
  last_error TEXT,
  last_error_at INTEGER
);
