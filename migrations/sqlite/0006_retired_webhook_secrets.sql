-- Every secret a rotation retires keeps signing for its full overlap, however many rotations follow:
-- retired_secrets is a JSON array of {"secret", "until"} (until: ms since the epoch), newest last,
-- pruned of expired entries at each rotation. It replaces the single previous_secret, whose window a
-- second rotation ended at once.
ALTER TABLE webhook_endpoints ADD COLUMN retired_secrets TEXT NOT NULL DEFAULT '[]';
UPDATE webhook_endpoints SET retired_secrets = json_array(json_object('secret', previous_secret, 'until', previous_secret_until))
  WHERE previous_secret IS NOT NULL AND previous_secret_until IS NOT NULL;
ALTER TABLE webhook_endpoints DROP COLUMN previous_secret;
ALTER TABLE webhook_endpoints DROP COLUMN previous_secret_until;
