-- Stripe-style idempotency keys, as in Brandur Leach's "Implementing Stripe-like
-- Idempotency Keys in Postgres" (https://brandur.org/idempotency-keys, the
-- Rocket Rides example). This file stands for the team's EXISTING table:
-- callscope never creates, alters or writes it; it only SELECTs from the view
-- in view.sql. The one thing callscope needs that the article's table lacks is
-- the updated_at column at the end (see there); everything else is as is.

CREATE TABLE IF NOT EXISTS idempotency_keys (
  id              BIGSERIAL   PRIMARY KEY,
  created_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
  idempotency_key TEXT        NOT NULL CHECK (char_length(idempotency_key) <= 100),
  last_run_at     TIMESTAMPTZ NOT NULL DEFAULT now(),  -- set when a request (re)takes the key
  locked_at       TIMESTAMPTZ DEFAULT now(),           -- NULL when no request holds the key

  -- the incoming request
  request_method  TEXT        NOT NULL CHECK (char_length(request_method) <= 10),
  request_params  JSONB       NOT NULL,
  request_path    TEXT        NOT NULL CHECK (char_length(request_path) <= 100),

  -- the stored response of a finished request
  response_code   INT         NULL,
  response_body   JSONB       NULL,

  -- 'started' | 'ride_created' | 'charge_created' | 'finished'
  recovery_point  TEXT        NOT NULL CHECK (char_length(recovery_point) <= 50),
  user_id         BIGINT      NOT NULL  -- REFERENCES users in the article
);

-- Keys are per user.
CREATE UNIQUE INDEX IF NOT EXISTS idempotency_keys_user_id_idempotency_key
  ON idempotency_keys (user_id, idempotency_key);

-- The article's completer and reaper select by last_run_at and created_at.
CREATE INDEX IF NOT EXISTS idempotency_keys_last_run_at ON idempotency_keys (last_run_at);
CREATE INDEX IF NOT EXISTS idempotency_keys_created_at ON idempotency_keys (created_at);

-- ---------------------------------------------------------------------------
-- Added for callscope: a column that changes on EVERY write of the row.
--
-- callscope follows the record incrementally (WHERE updated_at > cursor ORDER
-- BY updated_at, call_id). None of the article's time columns can be that:
-- the write that finishes a key (recovery_point = 'finished', response_code,
-- response_body, locked_at = NULL) touches neither last_run_at nor locked_at,
-- and moving from one recovery point to the next touches neither either. With
-- updated_at = last_run_at (or GREATEST(last_run_at, locked_at)) a finished
-- key would never be read again and would stay PROCESSING in callscope.
-- The application does not need to change: the DEFAULT stamps inserts and the
-- trigger stamps updates. clock_timestamp() (not now(), the transaction's
-- start) so that several writes in one transaction still move it forward.
-- Added with DEFAULT now() first: a stable default needs no rewrite of the
-- table (the rows there get the time of the ALTER); then the real default.
ALTER TABLE idempotency_keys
  ADD COLUMN IF NOT EXISTS updated_at TIMESTAMPTZ NOT NULL DEFAULT now();
ALTER TABLE idempotency_keys ALTER COLUMN updated_at SET DEFAULT clock_timestamp();

CREATE OR REPLACE FUNCTION idempotency_keys_touch() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.updated_at := clock_timestamp();
  RETURN NEW;
END
$$;

CREATE OR REPLACE TRIGGER idempotency_keys_touch
  BEFORE UPDATE ON idempotency_keys
  FOR EACH ROW EXECUTE FUNCTION idempotency_keys_touch();

-- callscope's incremental reads: WHERE updated_at >= $1 ORDER BY updated_at, call_id.
CREATE INDEX IF NOT EXISTS idempotency_keys_updated_at ON idempotency_keys (updated_at);

-- callscope's point lookups (inspect, drill-down, report) are by the view's
-- call_id; this index matches its expression exactly, so they need no scan.
CREATE INDEX IF NOT EXISTS idempotency_keys_call_id
  ON idempotency_keys ((user_id::text || ':' || idempotency_key));
