-- callscope's view of Stripe-style idempotency keys (schema.sql in this
-- directory): one row per key, in the columns of callscope's reference table
-- idempotent_record. callscope.toml here points [postgres.record] at it.
-- Run as the table's owner; callscope's role only needs SELECT on the view.

-- The request digest as a function, so that an index can hold it: the
-- key-rotation drill-down reads the records of one digest. convert_to() is
-- only STABLE (it depends on the database's encoding, fixed for a database),
-- so the function is declared IMMUTABLE on that ground.
CREATE OR REPLACE FUNCTION callscope_request_digest(
  user_id bigint, method text, path text, params jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT encode(sha256(convert_to(
    user_id::text || ' ' || method || ' ' || path || ' ' || params::text, 'UTF8')), 'hex')
$$;
CREATE INDEX IF NOT EXISTS idempotency_keys_request_digest ON idempotency_keys
  (callscope_request_digest(user_id, request_method, request_path, request_params));

CREATE OR REPLACE VIEW callscope_idempotent_record AS
SELECT
  -- call_id: keys are unique per user, not globally (UNIQUE (user_id,
  -- idempotency_key)), so the user is part of the id. Written exactly as the
  -- index idempotency_keys_call_id so that lookups by call_id use it.
  k.user_id::text || ':' || k.idempotency_key AS call_id,

  -- request_digest: SHA-256 (hex) of who asked for what. Two keys with the same
  -- digest close together are callscope's key_rotation: a client that timed
  -- out and retried under a NEW key, executing the request twice. jsonb prints
  -- its keys in a canonical order, so the same params give the same text
  -- whatever order the client sent them in. The user is part of it: two users
  -- asking for the same ride are two requests, not a retry.
  -- Computed by callscope_request_digest above, which the index holds.
  callscope_request_digest(k.user_id, k.request_method, k.request_path, k.request_params)
    AS request_digest,

  -- status: every recovery point before 'finished' is a request still under
  -- way (or abandoned until the completer picks it up): PROCESSING. A finished
  -- key holds the response every retry gets: SUCCESS below 400, FAILED for a
  -- 4xx/5xx (402 card declined, 503 payment processor error) or no code at all.
  CASE
    WHEN k.recovery_point <> 'finished' THEN 'PROCESSING'
    WHEN k.response_code < 400 THEN 'SUCCESS'
    ELSE 'FAILED'
  END AS status,

  -- result_snapshot: the stored response body (NULL until finished).
  k.response_body::text AS result_snapshot,

  -- created_at: when the key was first seen; stays put for the key's life.
  k.created_at,

  -- updated_at: the trigger-maintained column added in schema.sql, which moves
  -- on every write. Not last_run_at: finishing a key does not touch it (nor
  -- locked_at, which is set to NULL), so callscope's incremental read
  -- (updated_at > cursor) would never see a key finish.
  k.updated_at,

  -- expire_at: Stripe keeps keys for 24 hours. Use your reaper's threshold
  -- (Rocket Rides' reaper deletes keys 72 hours after created_at).
  k.created_at + interval '24 hours' AS expire_at
FROM idempotency_keys k;

-- callscope reads as callscope_ro (SELECT only; see callscope's README,
-- "Least privilege"). Replace the role name with yours; the role must exist.
GRANT SELECT ON callscope_idempotent_record TO callscope_ro;
