-- lethe's core tables. Every per-partition operation touches only rows keyed
-- by partition_id, so a distributed Postgres (Citus) can shard on it.

CREATE TABLE lethe.queues (
    id                          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name                        text NOT NULL UNIQUE,
    namespace                   text NOT NULL DEFAULT '',
    task                        text NOT NULL DEFAULT '',
    lease_time                  int  NOT NULL DEFAULT 300,
    retry_limit                 int  NOT NULL DEFAULT 3,
    retry_delay_ms              int  NOT NULL DEFAULT 1000,
    delayed_processing          int  NOT NULL DEFAULT 0,
    window_buffer               int  NOT NULL DEFAULT 0,
    retention_enabled           bool NOT NULL DEFAULT false,
    retention_seconds           int  NOT NULL DEFAULT 0,
    completed_retention_seconds int  NOT NULL DEFAULT 0,
    max_wait_time_seconds       int  NOT NULL DEFAULT 0,
    dedup_window_seconds        int  NOT NULL DEFAULT 0,
    -- The rest of Queen's options, kept so configure round-trips them.
    options                     jsonb NOT NULL DEFAULT '{}',
    created_at                  timestamptz NOT NULL,
    updated_at                  timestamptz NOT NULL
);

-- One row per ordered partition. Its row lock serializes appends; next_offset
-- is the offset the next frame gets; low_watermark is the first offset that
-- may still exist (retention moves it forward in whole segments).
CREATE TABLE lethe.partitions (
    id            uuid PRIMARY KEY,
    queue_id      bigint NOT NULL REFERENCES lethe.queues(id) ON DELETE CASCADE,
    name          text NOT NULL,
    next_offset   bigint NOT NULL DEFAULT 0,
    low_watermark bigint NOT NULL DEFAULT 0,
    created_at    timestamptz NOT NULL,
    last_push_at  timestamptz,
    UNIQUE (queue_id, name)
);

-- A segment is one row holding frame_count length-prefixed frames with the
-- contiguous offsets base_offset..last_offset. Retention deletes whole rows,
-- walking the primary key from the partition's head.
CREATE TABLE lethe.segments (
    partition_id uuid   NOT NULL,
    base_offset  bigint NOT NULL,
    last_offset  bigint NOT NULL,
    frame_count  int    NOT NULL,
    first_at     timestamptz NOT NULL,
    last_at      timestamptz NOT NULL,
    byte_size    int    NOT NULL,
    frames       bytea  NOT NULL,
    PRIMARY KEY (partition_id, base_offset)
);

-- The transaction-id hash sidecar: dedup of pushes and ack resolution when
-- no lease names the offset. One row per segment: hashes[i] (64 bits of
-- SHA-256 of a transaction id) is the message at base_offset + i - 1. A row
-- per segment rather than per message keeps the sidecar's write cost a
-- fraction of a row per message too (a B-tree row per message was 60% of
-- an append's time); the GIN index finds a hash. fastupdate is off: its
-- pending list is scanned whole by every lookup, and every append looks up.
-- Purged from the partition's head, in primary key order, on its own clock
-- by the retention loop.
CREATE TABLE lethe.txns (
    partition_id uuid   NOT NULL,
    base_offset  bigint NOT NULL,
    created_at   timestamptz NOT NULL,
    hashes       bigint[] NOT NULL,
    PRIMARY KEY (partition_id, base_offset)
);
CREATE INDEX txns_hashes_idx ON lethe.txns USING gin (hashes) WITH (fastupdate = off);

-- A consumer group's subscription to a queue: where its cursors start.
CREATE TABLE lethe.subscriptions (
    queue_id    bigint NOT NULL REFERENCES lethe.queues(id) ON DELETE CASCADE,
    group_name  text   NOT NULL,
    mode        text   NOT NULL DEFAULT 'all',
    from_at     timestamptz,
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (queue_id, group_name)
);

-- The cursor and lease of one consumer group on one partition. committed is
-- the last offset the group is done with (-1 before anything). A lease hands
-- lease_from..lease_to to one consumer until lease_until; lease_txns holds
-- their transaction ids so an ack resolves without reading segments.
CREATE TABLE lethe.cursors (
    partition_id  uuid   NOT NULL REFERENCES lethe.partitions(id) ON DELETE CASCADE,
    group_name    text   NOT NULL,
    committed     bigint NOT NULL,
    lease_id      uuid,
    lease_from    bigint,
    lease_to      bigint,
    lease_until   timestamptz,
    lease_txns    text[],
    lease_done    bigint[],
    lease_fail    bigint[],
    lease_error   text,
    retry_offset  bigint,
    retry_count   int NOT NULL DEFAULT 0,
    -- After a failure the partition is not redelivered to the group before
    -- this time (the queue's retryDelay).
    retry_after   timestamptz,
    -- Offsets past committed that the group already completed (acked after
    -- an earlier message of the same lease failed): skipped on redelivery.
    acked_ahead   bigint[],
    last_pop_at   timestamptz,
    updated_at    timestamptz NOT NULL,
    PRIMARY KEY (partition_id, group_name)
);
CREATE UNIQUE INDEX cursors_lease_idx ON lethe.cursors (lease_id) WHERE lease_id IS NOT NULL;

-- Messages a group gave up on after retryLimit failures. A copy, so the
-- segment can go by retention while the dead letter stays.
CREATE TABLE lethe.dead_letters (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    partition_id  uuid   NOT NULL REFERENCES lethe.partitions(id) ON DELETE CASCADE,
    group_name    text   NOT NULL,
    msg_offset    bigint NOT NULL,
    txn_id        text   NOT NULL,
    trace_id      text   NOT NULL DEFAULT '',
    payload       jsonb,
    error         text   NOT NULL DEFAULT '',
    retry_count   int    NOT NULL,
    created_at    timestamptz NOT NULL,
    failed_at     timestamptz NOT NULL
);
CREATE INDEX dead_letters_partition_idx ON lethe.dead_letters (partition_id, failed_at);
CREATE INDEX dead_letters_failed_at_idx ON lethe.dead_letters (failed_at);

-- Durable server-wide switches shared by every replica (maintenance mode).
CREATE TABLE lethe.settings (
    key        text PRIMARY KEY,
    value      jsonb NOT NULL,
    updated_at timestamptz NOT NULL
);
