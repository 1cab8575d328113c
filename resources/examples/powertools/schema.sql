-- An AWS Lambda Powertools-style idempotency table, ported to PostgreSQL: the
-- attributes of Powertools' DynamoDB persistence layer (id, expiration,
-- in_progress_expiration, status, data, validation) as columns. This file
-- stands for the team's EXISTING table: callscope never creates, alters or
-- writes it; it only SELECTs from the view in view.sql. Powertools' items
-- carry no time of writing; created_at and updated_at below are what
-- callscope needs besides.

CREATE TABLE IF NOT EXISTS idempotency (
  -- "<function>#<md5 of the idempotency key>", e.g.
  -- "orders-ProcessPayment.app.lambda_handler#1b6453892473a467d07372d45eb05abc"
  id                     TEXT   PRIMARY KEY,
  expiration             BIGINT NOT NULL,  -- epoch SECONDS: the record is void after this
  in_progress_expiration BIGINT,           -- epoch MILLISECONDS: an INPROGRESS lock lapses
  -- Powertools stores INPROGRESS or COMPLETED and derives EXPIRED when it reads
  -- a record past its expiration; a port (or a sweeper) may store EXPIRED too.
  status                 TEXT   NOT NULL
    CHECK (status IN ('INPROGRESS', 'COMPLETED', 'EXPIRED')),
  data                   TEXT,             -- the saved response (JSON), NULL while in progress
  validation             TEXT,             -- md5 of the payload, when payload validation is on

  -- Set by the application when it writes a record for a new request: on
  -- insert, and when it takes over a record whose expiration has passed (a
  -- new incarnation of the key; callscope reports a later created_at for the
  -- same id as expired_replay). Not when it takes over a lapsed INPROGRESS
  -- lock: that is the same request run again. The port's save_inprogress:
  --   INSERT INTO idempotency AS r (id, expiration, in_progress_expiration,
  --                                 status, validation)
  --   VALUES ($1, $2, $3, 'INPROGRESS', $4)
  --   ON CONFLICT (id) DO UPDATE SET expiration = EXCLUDED.expiration,
  --     in_progress_expiration = EXCLUDED.in_progress_expiration,
  --     status = 'INPROGRESS', data = NULL, validation = EXCLUDED.validation,
  --     created_at = CASE WHEN r.expiration < $5 THEN now() ELSE r.created_at END
  --   WHERE r.expiration < $5                 -- $5: now, epoch seconds
  --      OR (r.status = 'INPROGRESS' AND r.in_progress_expiration < $6)  -- $6: ms
  --   -- no row affected: IdempotencyItemAlreadyExistsError
  created_at             TIMESTAMPTZ NOT NULL DEFAULT now(),

  -- callscope follows the record incrementally (WHERE updated_at > cursor ORDER
  -- BY updated_at, call_id), so it needs a column that changes on EVERY write:
  -- INPROGRESS -> COMPLETED, a takeover, a sweeper marking EXPIRED. None of
  -- Powertools' attributes does (expiration is fixed when the record is made).
  -- The application need not know about it: the DEFAULT stamps inserts and the
  -- trigger below stamps updates (upserts included). clock_timestamp(), not
  -- now() (the transaction's start), so that writes in one transaction move it.
  updated_at             TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
);

CREATE OR REPLACE FUNCTION idempotency_touch() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.updated_at := clock_timestamp();
  RETURN NEW;
END
$$;

CREATE OR REPLACE TRIGGER idempotency_touch
  BEFORE UPDATE ON idempotency
  FOR EACH ROW EXECUTE FUNCTION idempotency_touch();

-- callscope's incremental reads: WHERE updated_at >= $1 ORDER BY updated_at, call_id.
CREATE INDEX IF NOT EXISTS idempotency_updated_at ON idempotency (updated_at);
-- callscope's lookups of the records of one request digest (the key_rotation
-- drill-down): the view's request_digest, written exactly as there.
CREATE INDEX IF NOT EXISTS idempotency_request_digest ON idempotency
  ((COALESCE(validation, split_part(id, '#', 2)) || ':' || split_part(id, '#', 1)));
-- DynamoDB's TTL, done by hand: DELETE FROM idempotency WHERE expiration < $now.
CREATE INDEX IF NOT EXISTS idempotency_expiration ON idempotency (expiration);
