-- The feed carries whatever event types the capabilities register (events/event-types.ts): the list of types
-- leaves the CHECKs, which now hold only the shape of a type name (`pet.created`), so a new producer needs no
-- change of the events tables.
ALTER TABLE events DROP CONSTRAINT events_type_check;
ALTER TABLE events ADD CONSTRAINT events_type_check CHECK (type ~ '^[a-z][a-z_]*\.[a-z][a-z_.]*$' AND length(type) <= 100);
ALTER TABLE event_retention DROP CONSTRAINT event_retention_type_check;
ALTER TABLE event_retention ADD CONSTRAINT event_retention_type_check CHECK (type ~ '^[a-z][a-z_]*\.[a-z][a-z_.]*$' AND length(type) <= 100);
