-- Reference deployment of callscope's inputs (SPEC §1.1, §1.2).
-- Every name here is the default of a mapping in the config file.

-- §1.1 Server idempotency record
CREATE TABLE IF NOT EXISTS idempotent_record (
  call_id         VARCHAR(64)  PRIMARY KEY,
  request_digest  CHAR(64)     NOT NULL,   -- SHA-256 hex of the key business params
  status          VARCHAR(16)  NOT NULL,   -- PROCESSING | SUCCESS | FAILED
  result_snapshot TEXT,
  first_source    VARCHAR(128),            -- caller instance of the first request
  lock_version    INT          NOT NULL DEFAULT 0,  -- bumped when a stale PROCESSING is re-occupied
  created_at      TIMESTAMPTZ  NOT NULL,
  updated_at      TIMESTAMPTZ  NOT NULL,
  expire_at       TIMESTAMPTZ  NOT NULL
);
CREATE INDEX IF NOT EXISTS idempotent_record_expire_at ON idempotent_record (expire_at);
CREATE INDEX IF NOT EXISTS idempotent_record_updated_at ON idempotent_record (updated_at, call_id);
-- the siblings of a key rotation (one request under several callIds), for the drill-down
CREATE INDEX IF NOT EXISTS idempotent_record_request_digest ON idempotent_record (request_digest);

-- §1.2 Server attempt log (optional): one row per request that reached the server
CREATE TABLE IF NOT EXISTS idempotent_attempt (
  id              BIGSERIAL    PRIMARY KEY,
  call_id         VARCHAR(64)  NOT NULL,
  request_digest  CHAR(64)     NOT NULL,
  source_instance VARCHAR(128) NOT NULL,   -- caller instance id / IP
  trace_id        VARCHAR(64),
  outcome         VARCHAR(24)  NOT NULL,   -- EXECUTED | IN_PROGRESS | REPLAYED | DIGEST_CONFLICT | REOCCUPIED
  arrived_at      TIMESTAMPTZ  NOT NULL,
  finished_at     TIMESTAMPTZ
);
CREATE INDEX IF NOT EXISTS idempotent_attempt_call_id ON idempotent_attempt (call_id);
CREATE INDEX IF NOT EXISTS idempotent_attempt_arrived_at ON idempotent_attempt (arrived_at, id);
