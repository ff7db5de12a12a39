-- The streams API (Queen's /streams/v1): registered queries and their state,
-- and the audit rows of the reclaim phases that purge it (internal/streams,
-- internal/traces). Nothing here is granted to PUBLIC: the schema is not,
-- and these are plain tables.

-- One row per registration of a streaming query. name is the user's
-- queryId; config_hash fingerprints its operator chain. A reset (a new
-- config_hash with reset: true) or a removal does not delete state in the
-- request: it retires the row (retired_at, retired_why) and, for a reset,
-- inserts a new one under a new id. The retention loop then deletes the
-- retired id's state in bounded steps, and the row once nothing is left.
CREATE TABLE lethe.stream_queries (
    id           uuid PRIMARY KEY,
    name         text NOT NULL,
    source_queue text NOT NULL,
    sink_queue   text,
    config_hash  text NOT NULL,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    retired_at   timestamptz,
    retired_why  text CHECK (retired_why IN ('reset', 'removed')),
    CHECK ((retired_at IS NULL) = (retired_why IS NULL))
);
-- At most one live registration per name.
CREATE UNIQUE INDEX stream_queries_live_name_idx ON lethe.stream_queries (name) WHERE retired_at IS NULL;
-- The reclaim phase's predicate: retired queries.
CREATE INDEX stream_queries_retired_idx ON lethe.stream_queries (retired_at) WHERE retired_at IS NOT NULL;

-- A streaming query's state per (query, source partition, key). Cycles of
-- one source partition write only its rows. updated_at is the last cycle
-- that wrote the key (reads do not count): keys idle past
-- STREAMS_STATE_IDLE_DAYS are purged. No cascade from stream_queries: a
-- retired query's state goes in bounded steps, never in one statement.
CREATE TABLE lethe.stream_state (
    query_id     uuid NOT NULL REFERENCES lethe.stream_queries (id),
    partition_id uuid NOT NULL,
    key          text NOT NULL,
    value        jsonb NOT NULL,
    updated_at   timestamptz NOT NULL,
    PRIMARY KEY (query_id, partition_id, key)
);
-- The idle-key rule's predicate.
CREATE INDEX stream_state_updated_idx ON lethe.stream_state (updated_at);

-- The audit row of one reclaim step outside the segment log: what a rule
-- deleted, for which query (or '' for traces), and the time range of the
-- rows it deleted. Aged out with the retention history
-- (METRICS_RETENTION_DAYS).
CREATE TABLE lethe.reclaim_history (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    executed_at timestamptz NOT NULL,
    rule        text NOT NULL CHECK (rule IN ('stream_query_retired', 'stream_state_idle', 'trace_retention')),
    subject     text NOT NULL,
    rows        bigint NOT NULL,
    oldest      timestamptz,
    newest      timestamptz
);
CREATE INDEX reclaim_history_time_idx ON lethe.reclaim_history (executed_at);
