-- When a key stops being accepted; NULL for a key that never expires.

ALTER TABLE api_keys ADD COLUMN expires_at TIMESTAMPTZ;
