-- `webhooks retry` restarts a given-up delivery's retry schedule (attempts back to 0) but not the count
-- `webhooks deliveries` shows: the attempts made before each retry are kept here, so the delivery log
-- numbers an attempt retried_attempts + attempts + 1 (4, 5 … after three, never 1 again).
ALTER TABLE webhook_deliveries ADD COLUMN retried_attempts integer NOT NULL DEFAULT 0;
