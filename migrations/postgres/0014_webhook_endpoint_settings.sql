-- What an integrator sets on an endpoint beside its URL, events and name (POST /v1/webhook-endpoints):
-- description: free text (NULL: none). rate_limit: the most deliveries per second it is sent (NULL: no limit).
-- signing: how its requests are signed: 'hmac-sha256' (secret whsec_…, signatures v1) or 'ed25519' (secret
-- whsk_…, the private key, which never leaves the store; signatures v1a). public_key: the ed25519 key
-- (whpk_…) receivers verify with, changed by each rotation; NULL for hmac-sha256. Existing endpoints keep hmac-sha256.
ALTER TABLE webhook_endpoints ADD COLUMN description text;
ALTER TABLE webhook_endpoints ADD COLUMN rate_limit integer CHECK (rate_limit IS NULL OR rate_limit > 0);
ALTER TABLE webhook_endpoints ADD COLUMN signing text NOT NULL DEFAULT 'hmac-sha256' CHECK (signing IN ('hmac-sha256', 'ed25519'));
ALTER TABLE webhook_endpoints ADD COLUMN public_key text;
-- an endpoint's failed attempts within a window (recover), newest first
CREATE INDEX webhook_attempts_failed ON webhook_attempts (endpoint_id, attempted_at) WHERE error IS NOT NULL;
