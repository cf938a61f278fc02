-- what a key may do: 'read' (operations that only read) or 'write' (everything); keys made
-- before roles existed keep full access
ALTER TABLE api_keys ADD COLUMN role text NOT NULL DEFAULT 'write' CHECK (role IN ('read', 'write'));
