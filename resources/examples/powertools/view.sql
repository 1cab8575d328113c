-- callscope's view of a Powertools-style idempotency table (schema.sql in this
-- directory): one row per record, in the columns of callscope's reference
-- table idempotent_record. callscope.toml here points [postgres.record] at it.
-- Run as the table's owner; callscope's role only needs SELECT on the view.

CREATE OR REPLACE VIEW callscope_idempotent_record AS
SELECT
  -- call_id: the record's key as Powertools made it, "<function>#<md5 of the
  -- idempotency key>"; the primary key, so lookups by call_id use its index.
  r.id AS call_id,

  -- request_digest: what callscope groups by to find a request retried under
  -- a new key (key_rotation) and shows, first 8 characters, in its evidence.
  -- With payload validation on, Powertools stores a hash of the payload
  -- (payload_validation_jmespath) in validation: two keys of one function
  -- with the same validation hash are the same request. It is qualified by
  -- the function (the id before '#'): two functions that validate the same
  -- payload, say both subscribers of one SNS topic, are not a retry. Without
  -- payload validation there is no digest of the request at all; then the
  -- key's own hash stands in, unique per record, and key_rotation stays
  -- silent. Note: the digest is only as good as the JMESPath; one that picks
  -- a single field ("amount") makes unrelated orders look like retries.
  -- The index idempotency_request_digest repeats this expression: change both.
  COALESCE(r.validation, split_part(r.id, '#', 2)) || ':' || split_part(r.id, '#', 1)
    AS request_digest,

  -- status: INPROGRESS and COMPLETED pass through (callscope.toml maps them).
  -- An EXPIRED record says nothing of how the request ended, so the view
  -- decides by data: a saved response means it completed; none means it was
  -- still INPROGRESS when it expired, the stuck in-progress record of
  -- Powertools' docs (the function timed out or crashed before saving).
  CASE
    WHEN r.status <> 'EXPIRED' THEN r.status
    WHEN r.data IS NOT NULL THEN 'COMPLETED'
    ELSE 'INPROGRESS'
  END AS status,

  -- result_snapshot: the saved response, NULL while in progress.
  r.data AS result_snapshot,

  -- created_at: when the application wrote the record for this request.
  r.created_at,

  -- updated_at: moved by the trigger in schema.sql on every write.
  r.updated_at,

  -- expire_at: expiration as it is, an integer of epoch seconds; callscope
  -- tells seconds from milliseconds by magnitude.
  r.expiration AS expire_at
FROM idempotency r;

-- callscope reads as callscope_ro (SELECT only; see callscope's README,
-- "Least privilege"). Replace the role name with yours; the role must exist.
GRANT SELECT ON callscope_idempotent_record TO callscope_ro;
