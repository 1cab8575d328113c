-- The simulator's own transactional outbox (not part of what callscope reads):
-- the server writes the receipt here in the same transaction as the record,
-- and a relay publishes it to Kafka at least once.
CREATE TABLE IF NOT EXISTS callscope_sim_outbox (
  id          BIGSERIAL   PRIMARY KEY,
  call_id     VARCHAR(64) NOT NULL,
  payload     TEXT        NOT NULL,
  fault       VARCHAR(32),             -- injected relay fault for this row, if any
  created_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
  published   BOOLEAN     NOT NULL DEFAULT false
);
CREATE INDEX IF NOT EXISTS callscope_sim_outbox_pending ON callscope_sim_outbox (id) WHERE NOT published;
