-- attempted_through: the highest event id any instance of this deployment has handed to the bus's broker
-- (written under the lease before each batch is published). A broker that answers "duplicate" for an event
-- above it was given that message id by someone else (another deployment sharing the stream under the same
-- identity): the relay reports it as an error instead of taking the event as stored.
ALTER TABLE bus_positions ADD COLUMN attempted_through INTEGER NOT NULL DEFAULT 0;
UPDATE bus_positions SET attempted_through = published_through;
