-- Message traces (Queen's /api/v1/traces): events a consumer records
-- against a message it processed, with optional names to find them by.
-- Kept TRACES_RETENTION_DAYS by created_at, purged by the retention loop in
-- bounded steps (reclaim_history rule trace_retention).
CREATE TABLE lethe.traces (
    id             uuid PRIMARY KEY,
    partition_id   uuid NOT NULL,
    transaction_id text NOT NULL,
    -- The message's offset when the transaction id resolved at record time.
    msg_offset     bigint,
    consumer_group text NOT NULL,
    event_type     text NOT NULL,
    data           jsonb NOT NULL,
    names          text[] NOT NULL DEFAULT '{}',
    worker_id      text,
    created_at     timestamptz NOT NULL
);
-- A message's traces.
CREATE INDEX traces_message_idx ON lethe.traces (partition_id, transaction_id, created_at);
-- Traces by name.
CREATE INDEX traces_names_idx ON lethe.traces USING gin (names);
-- The retention rule's predicate.
CREATE INDEX traces_created_idx ON lethe.traces (created_at);
