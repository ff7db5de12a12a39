-- The lethe schema: its tables, sequences, constraints, indexes and table
-- storage settings, grouped by concern. A fresh database starts here; a
-- database migrated by the chain this baseline replaces (versions 1..157)
-- is adopted without running it (internal/schema/migrate.go).
--
-- Stored functions, views and triggers are not here: they are code, under
-- internal/schema/functions, applied after the numbered migrations.
-- lethe.schema_migrations and lethe.schema_repeatables are created by
-- Migrate itself before any migration runs.

-- ======================================================================
-- The catalog: queues and their partitions
-- ======================================================================

-- A queue: its name, its options (Queen's queue options as JSON) and the
-- retention tier its segments are written to.
CREATE TABLE lethe.queues (
    id bigint NOT NULL,
    name text NOT NULL,
    namespace text DEFAULT ''::text NOT NULL,
    task text DEFAULT ''::text NOT NULL,
    lease_time integer DEFAULT 300 NOT NULL,
    retry_limit integer DEFAULT 3 NOT NULL,
    retry_delay_ms integer DEFAULT 1000 NOT NULL,
    delayed_processing integer DEFAULT 0 NOT NULL,
    window_buffer integer DEFAULT 0 NOT NULL,
    retention_enabled boolean DEFAULT false NOT NULL,
    retention_seconds integer DEFAULT 0 NOT NULL,
    completed_retention_seconds integer DEFAULT 0 NOT NULL,
    max_wait_time_seconds integer DEFAULT 0 NOT NULL,
    dedup_window_seconds integer DEFAULT 0 NOT NULL,
    options jsonb DEFAULT '{}'::jsonb NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    retention_tier text DEFAULT 'forever'::text NOT NULL,
    quarantined text DEFAULT 'keep'::text NOT NULL,
    required_groups text[] DEFAULT '{}'::text[] NOT NULL,
    CONSTRAINT queues_quarantined_check CHECK ((quarantined = ANY (ARRAY['keep'::text, 'purge'::text]))),
    CONSTRAINT queues_retention_tier_check CHECK ((retention_tier = ANY (ARRAY['1w'::text, '3w'::text, '7w'::text, 'forever'::text])))
);

ALTER TABLE lethe.queues ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME lethe.queues_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE ONLY lethe.queues
    ADD CONSTRAINT queues_name_key UNIQUE (name);

ALTER TABLE ONLY lethe.queues
    ADD CONSTRAINT queues_pkey PRIMARY KEY (id);

-- A partition of a queue: the log's unit of order. next_offset is the
-- offset the next append takes, low_watermark the first offset retention
-- has not removed; the append locks this row, so appends to one partition
-- are serialised.
CREATE TABLE lethe.partitions (
    id uuid NOT NULL,
    queue_id bigint NOT NULL,
    name text NOT NULL,
    next_offset bigint DEFAULT 0 NOT NULL,
    low_watermark bigint DEFAULT 0 NOT NULL,
    created_at timestamp with time zone NOT NULL,
    last_push_at timestamp with time zone
)
WITH (fillfactor='70', autovacuum_vacuum_scale_factor='0', autovacuum_vacuum_threshold='100', autovacuum_vacuum_cost_delay='0');

ALTER TABLE ONLY lethe.partitions
    ADD CONSTRAINT partitions_pkey PRIMARY KEY (id);

ALTER TABLE ONLY lethe.partitions
    ADD CONSTRAINT partitions_queue_id_name_key UNIQUE (queue_id, name);

ALTER TABLE ONLY lethe.partitions
    ADD CONSTRAINT partitions_queue_id_fkey FOREIGN KEY (queue_id) REFERENCES lethe.queues(id) ON DELETE CASCADE;

-- ======================================================================
-- The log: segments, their leaves by tier and time, the held area
-- ======================================================================

-- The log itself. A segment is one row holding frame_count length-prefixed
-- frames with the contiguous offsets base_offset..last_offset. Partitioned
-- by tier (one child per retentionTier, plus the held area), each child
-- by range of appended_at into leaves that
-- lethe.ensure_leaves creates ahead of the clock; a tier's expiry drops
-- whole leaves. appended_at is the reading of the append that wrote the
-- segment (never earlier than the partition's previous one); moves between
-- tiers keep it.
CREATE TABLE lethe.segments (
    partition_id uuid NOT NULL,
    base_offset bigint NOT NULL,
    last_offset bigint NOT NULL,
    frame_count integer NOT NULL,
    first_at timestamp with time zone NOT NULL,
    last_at timestamp with time zone NOT NULL,
    byte_size integer NOT NULL,
    frames bytea NOT NULL,
    tier text NOT NULL,
    appended_at timestamp with time zone NOT NULL
)
PARTITION BY LIST (tier);

-- Segments of queues whose retentionTier is 1w.
CREATE TABLE lethe.segments_1w PARTITION OF lethe.segments FOR VALUES IN ('1w')
    PARTITION BY RANGE (appended_at);

-- Segments of queues whose retentionTier is 3w.
CREATE TABLE lethe.segments_3w PARTITION OF lethe.segments FOR VALUES IN ('3w')
    PARTITION BY RANGE (appended_at);

-- Segments of queues whose retentionTier is 7w.
CREATE TABLE lethe.segments_7w PARTITION OF lethe.segments FOR VALUES IN ('7w')
    PARTITION BY RANGE (appended_at);

-- Segments of queues whose retentionTier is forever (the default): no
-- leaf of it expires; the queue's rules delete its segments.
CREATE TABLE lethe.segments_forever PARTITION OF lethe.segments FOR VALUES IN ('forever')
    PARTITION BY RANGE (appended_at);

-- The held area: segments a tier no longer keeps (a leaf past its window,
-- a shortened tier) while some consumer group still wants a frame of them;
-- a held leaf goes once nobody does.
CREATE TABLE lethe.segments_held PARTITION OF lethe.segments FOR VALUES IN ('held')
    PARTITION BY RANGE (appended_at);

-- TOAST compresses segment payloads with lz4 where the server was built
-- with it (pglz otherwise): frames of JSON compress well.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_settings
               WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)) THEN
        ALTER TABLE lethe.segments ALTER COLUMN frames SET COMPRESSION lz4;
        ALTER TABLE lethe.segments_1w ALTER COLUMN frames SET COMPRESSION lz4;
        ALTER TABLE lethe.segments_3w ALTER COLUMN frames SET COMPRESSION lz4;
        ALTER TABLE lethe.segments_7w ALTER COLUMN frames SET COMPRESSION lz4;
        ALTER TABLE lethe.segments_forever ALTER COLUMN frames SET COMPRESSION lz4;
        ALTER TABLE lethe.segments_held ALTER COLUMN frames SET COMPRESSION lz4;
    END IF;
END $$;

-- One row per leaf of segments or txns, written in the transaction that
-- attaches it: where data of a tier and a time range lives, and how far a
-- drop got (state, audited_through), so a drop a crash interrupted resumes
-- without a second audit row.
CREATE TABLE lethe.leaves (
    name text NOT NULL,
    parent text NOT NULL,
    tier text NOT NULL,
    lo timestamp with time zone NOT NULL,
    hi timestamp with time zone NOT NULL,
    state text DEFAULT 'attached'::text NOT NULL,
    audited_through uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT leaves_state_check CHECK ((state = ANY (ARRAY['attached'::text, 'detaching'::text, 'detached'::text]))),
    CONSTRAINT leaves_tier_check CHECK ((tier = ANY (ARRAY['1w'::text, '3w'::text, '7w'::text, 'forever'::text, 'held'::text, 'txns'::text])))
);

ALTER TABLE ONLY lethe.leaves
    ADD CONSTRAINT leaves_pkey PRIMARY KEY (name);

CREATE INDEX leaves_parent_range_idx ON lethe.leaves USING btree (parent, lo);

-- ======================================================================
-- The sidecar: transaction ids
-- ======================================================================

-- The dedup sidecar: the hashes of the transaction ids of each segment
-- (one row per segment, same key), partitioned by day of the append into
-- leaves; each leaf has a GIN index on hashes (fastupdate off: its pending
-- list is scanned whole by every lookup, and every append looks up).
-- Purged from the partition's head on its own clock by the retention loop.
CREATE TABLE lethe.txns (
    partition_id uuid NOT NULL,
    base_offset bigint NOT NULL,
    created_at timestamp with time zone NOT NULL,
    hashes bigint[] NOT NULL,
    positions integer[]
)
PARTITION BY RANGE (created_at);

-- ======================================================================
-- Consumers: subscriptions, cursors and leases
-- ======================================================================

-- A consumer group's subscription to a queue: where its cursors start.
CREATE TABLE lethe.subscriptions (
    queue_id bigint NOT NULL,
    group_name text NOT NULL,
    mode text DEFAULT 'all'::text NOT NULL,
    from_at timestamp with time zone,
    created_at timestamp with time zone NOT NULL
);

ALTER TABLE ONLY lethe.subscriptions
    ADD CONSTRAINT subscriptions_pkey PRIMARY KEY (queue_id, group_name);

ALTER TABLE ONLY lethe.subscriptions
    ADD CONSTRAINT subscriptions_queue_id_fkey FOREIGN KEY (queue_id) REFERENCES lethe.queues(id) ON DELETE CASCADE;

-- The cursor and lease of one consumer group on one partition. committed
-- is the last offset the group is done with (-1 before anything). A lease
-- hands lease_from..lease_to to one consumer until lease_until; lease_txns
-- holds their transaction ids so an ack resolves without reading segments.
-- Updated on every pop and ack: fillfactor and autovacuum settings keep
-- those updates HOT.
CREATE TABLE lethe.cursors (
    partition_id uuid NOT NULL,
    group_name text NOT NULL,
    committed bigint NOT NULL,
    lease_id uuid,
    lease_from bigint,
    lease_to bigint,
    lease_until timestamp with time zone,
    lease_done bigint[],
    lease_fail bigint[],
    lease_error text,
    retry_offset bigint,
    retry_count integer DEFAULT 0 NOT NULL,
    retry_after timestamp with time zone,
    acked_ahead bigint[],
    last_pop_at timestamp with time zone,
    updated_at timestamp with time zone NOT NULL,
    lease_offsets bigint[],
    lease_hashes bigint[]
)
WITH (fillfactor='50', autovacuum_vacuum_scale_factor='0', autovacuum_vacuum_threshold='100', autovacuum_vacuum_cost_delay='0', toast.autovacuum_vacuum_scale_factor='0', toast.autovacuum_vacuum_threshold='100');

ALTER TABLE ONLY lethe.cursors
    ADD CONSTRAINT cursors_pkey PRIMARY KEY (partition_id, group_name);

ALTER TABLE ONLY lethe.cursors
    ADD CONSTRAINT cursors_partition_id_fkey FOREIGN KEY (partition_id) REFERENCES lethe.partitions(id) ON DELETE CASCADE;

-- ======================================================================
-- Dead letters
-- ======================================================================

-- Messages a group gave up on after retryLimit failures. A copy, so the
-- segment can go by retention while the dead letter stays; purged after
-- DLQ_RETENTION_DAYS unless held.
CREATE TABLE lethe.dead_letters (
    id bigint NOT NULL,
    partition_id uuid NOT NULL,
    group_name text NOT NULL,
    msg_offset bigint NOT NULL,
    txn_id text NOT NULL,
    trace_id text DEFAULT ''::text NOT NULL,
    payload jsonb,
    error text DEFAULT ''::text NOT NULL,
    retry_count integer NOT NULL,
    created_at timestamp with time zone NOT NULL,
    failed_at timestamp with time zone NOT NULL,
    payload_sealed bytea
);

ALTER TABLE lethe.dead_letters ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME lethe.dead_letters_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE ONLY lethe.dead_letters
    ADD CONSTRAINT dead_letters_pkey PRIMARY KEY (id);

CREATE INDEX dead_letters_failed_at_idx ON lethe.dead_letters USING btree (failed_at);

CREATE INDEX dead_letters_partition_idx ON lethe.dead_letters USING btree (partition_id, failed_at);

CREATE INDEX dead_letters_partition_offset_idx ON lethe.dead_letters USING btree (partition_id, msg_offset);

ALTER TABLE ONLY lethe.dead_letters
    ADD CONSTRAINT dead_letters_partition_id_fkey FOREIGN KEY (partition_id) REFERENCES lethe.partitions(id) ON DELETE CASCADE;

-- ======================================================================
-- Retention: what ran, what it removed, what it may not remove
-- ======================================================================

-- The audit of every deleting step of the segment log: one row per rule,
-- queue and cycle (the fold trigger merges a cycle's steps), with the
-- offsets and partitions it covered. Aged out by the metrics purge.
CREATE TABLE lethe.retention_history (
    id bigint NOT NULL,
    executed_at timestamp with time zone NOT NULL,
    queue_name text NOT NULL,
    partition_name text NOT NULL,
    partition_id uuid NOT NULL,
    rule text NOT NULL,
    segments integer NOT NULL,
    frames bigint NOT NULL,
    bytes bigint NOT NULL,
    from_offset bigint,
    to_offset bigint,
    lost jsonb,
    partitions integer DEFAULT 1 NOT NULL,
    ranges jsonb,
    last_partition uuid,
    CONSTRAINT retention_history_rule_check CHECK ((rule = ANY (ARRAY['retention'::text, 'completed_retention'::text, 'max_wait'::text, 'partition_cleanup'::text, 'tier_drop'::text, 'held_move'::text, 'tier_move'::text, 'held_drop'::text, 'tier_change'::text, 'quarantine_purge'::text])))
)
WITH (autovacuum_vacuum_scale_factor='0.01', autovacuum_vacuum_threshold='1000', fillfactor='90');

ALTER TABLE lethe.retention_history ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME lethe.retention_history_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE lethe.retention_history
    ADD CONSTRAINT retention_history_only_time_rules_lose CHECK (((lost IS NULL) OR (rule = ANY (ARRAY['retention'::text, 'max_wait'::text])))) NOT VALID;

ALTER TABLE ONLY lethe.retention_history
    ADD CONSTRAINT retention_history_pkey PRIMARY KEY (id);

CREATE INDEX retention_history_queue_time_idx ON lethe.retention_history USING btree (queue_name, executed_at);

CREATE INDEX retention_history_time_idx ON lethe.retention_history USING btree (executed_at);

-- What one consumer group lost unread by one rule in one cycle of one
-- queue: messages and leased are exact sums over the partitions. Only
-- retentionSeconds and maxWaitTimeSeconds may lose unread data: the check
-- refuses any other rule's loss, and with it the statement of the step
-- that would delete.
CREATE TABLE lethe.retention_losses (
    id bigint NOT NULL,
    executed_at timestamp with time zone NOT NULL,
    queue_name text NOT NULL,
    rule text NOT NULL,
    group_name text NOT NULL,
    messages bigint NOT NULL,
    leased bigint NOT NULL,
    partitions integer NOT NULL,
    partition_name text NOT NULL,
    partition_id uuid NOT NULL,
    from_offset bigint,
    to_offset bigint,
    ranges jsonb NOT NULL,
    last_partition uuid NOT NULL,
    CONSTRAINT retention_losses_only_time_rules_lose CHECK ((rule = ANY (ARRAY['retention'::text, 'max_wait'::text])))
)
WITH (fillfactor='70', autovacuum_vacuum_scale_factor='0.01', autovacuum_vacuum_threshold='1000');

ALTER TABLE lethe.retention_losses ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME lethe.retention_losses_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE ONLY lethe.retention_losses
    ADD CONSTRAINT retention_losses_decision_key UNIQUE (executed_at, queue_name, rule, group_name);

ALTER TABLE ONLY lethe.retention_losses
    ADD CONSTRAINT retention_losses_pkey PRIMARY KEY (id);

-- One row per cycle that deleted something or failed: the cycle's log
-- line, kept. Aged out by the metrics purge.
CREATE TABLE lethe.retention_runs (
    id bigint NOT NULL,
    started_at timestamp with time zone NOT NULL,
    elapsed_ms bigint NOT NULL,
    queues integer NOT NULL,
    segments_deleted bigint NOT NULL,
    frames_deleted bigint NOT NULL,
    bytes_deleted bigint NOT NULL,
    txns_purged bigint NOT NULL,
    max_wait_evicted bigint NOT NULL,
    partitions_deleted integer NOT NULL,
    subscriptions_deleted integer NOT NULL,
    metrics_purged bigint NOT NULL,
    error text
)
WITH (autovacuum_vacuum_scale_factor='0.01', autovacuum_vacuum_threshold='1000');

ALTER TABLE lethe.retention_runs ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME lethe.retention_runs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE ONLY lethe.retention_runs
    ADD CONSTRAINT retention_runs_pkey PRIMARY KEY (id);

CREATE INDEX retention_runs_time_idx ON lethe.retention_runs USING btree (started_at);

-- The audit row of one reclaim step outside the segment log (streams'
-- state, traces): what a rule deleted, for which query ('' for traces),
-- and the time range of the rows it deleted. Aged out with the retention
-- history.
CREATE TABLE lethe.reclaim_history (
    id bigint NOT NULL,
    executed_at timestamp with time zone NOT NULL,
    rule text NOT NULL,
    subject text NOT NULL,
    rows bigint NOT NULL,
    oldest timestamp with time zone,
    newest timestamp with time zone,
    steps integer DEFAULT 1 NOT NULL,
    CONSTRAINT reclaim_history_rule_check CHECK ((rule = ANY (ARRAY['stream_query_retired'::text, 'stream_state_idle'::text, 'trace_retention'::text])))
)
WITH (fillfactor='90');

ALTER TABLE lethe.reclaim_history ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME lethe.reclaim_history_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE ONLY lethe.reclaim_history
    ADD CONSTRAINT reclaim_history_pkey PRIMARY KEY (id);

CREATE INDEX reclaim_history_time_idx ON lethe.reclaim_history USING btree (executed_at);

-- A retention hold on a queue: while active, no rule deletes its segments,
-- its dead letters or the queue itself (the trigger
-- queues_refuse_held_delete). Rows are kept after release: they are the
-- audit of who held what, when and why.
CREATE TABLE lethe.retention_holds (
    id bigint NOT NULL,
    queue_id bigint NOT NULL,
    queue_name text NOT NULL,
    reason text NOT NULL,
    placed_at timestamp with time zone NOT NULL,
    placed_by text NOT NULL,
    released_at timestamp with time zone,
    released_by text,
    CONSTRAINT retention_holds_reason_check CHECK (((length(reason) >= 1) AND (length(reason) <= 1024)))
);

ALTER TABLE lethe.retention_holds ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME lethe.retention_holds_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE ONLY lethe.retention_holds
    ADD CONSTRAINT retention_holds_pkey PRIMARY KEY (id);

CREATE INDEX retention_holds_active_idx ON lethe.retention_holds USING btree (queue_id) WHERE (released_at IS NULL);

-- One tier change per queue: awaiting_confirm (a shortening, announced,
-- not applied), running (the queue has its new tier; its segments outside
-- it are being settled) or done. next_tier is a value set while one runs.
CREATE TABLE lethe.retention_changes (
    queue_id bigint NOT NULL,
    from_tier text NOT NULL,
    to_tier text NOT NULL,
    state text NOT NULL,
    delete_messages bigint DEFAULT 0 NOT NULL,
    delete_bytes bigint DEFAULT 0 NOT NULL,
    move_messages bigint DEFAULT 0 NOT NULL,
    move_bytes bigint DEFAULT 0 NOT NULL,
    hold_messages bigint DEFAULT 0 NOT NULL,
    hold_bytes bigint DEFAULT 0 NOT NULL,
    deleted_messages bigint DEFAULT 0 NOT NULL,
    moved_messages bigint DEFAULT 0 NOT NULL,
    held_messages bigint DEFAULT 0 NOT NULL,
    next_tier text,
    requested_at timestamp with time zone NOT NULL,
    confirmed_at timestamp with time zone,
    finished_at timestamp with time zone,
    updated_at timestamp with time zone NOT NULL,
    CONSTRAINT retention_changes_state_check CHECK ((state = ANY (ARRAY['awaiting_confirm'::text, 'running'::text, 'done'::text])))
);

ALTER TABLE ONLY lethe.retention_changes
    ADD CONSTRAINT retention_changes_pkey PRIMARY KEY (queue_id);

ALTER TABLE ONLY lethe.retention_changes
    ADD CONSTRAINT retention_changes_queue_id_fkey FOREIGN KEY (queue_id) REFERENCES lethe.queues(id) ON DELETE CASCADE;

-- ======================================================================
-- Streams
-- ======================================================================

-- One row per registration of a streaming query. name is the user's
-- queryId; config_hash fingerprints its operator chain. A reset or a
-- removal retires the row (retired_at, retired_why); the retention loop
-- then deletes the retired id's state in bounded steps, and the row once
-- nothing is left.
CREATE TABLE lethe.stream_queries (
    id uuid NOT NULL,
    name text NOT NULL,
    source_queue text NOT NULL,
    sink_queue text,
    config_hash text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    retired_at timestamp with time zone,
    retired_why text,
    CONSTRAINT stream_queries_check CHECK (((retired_at IS NULL) = (retired_why IS NULL))),
    CONSTRAINT stream_queries_retired_why_check CHECK ((retired_why = ANY (ARRAY['reset'::text, 'removed'::text])))
);

ALTER TABLE ONLY lethe.stream_queries
    ADD CONSTRAINT stream_queries_pkey PRIMARY KEY (id);

CREATE UNIQUE INDEX stream_queries_live_name_idx ON lethe.stream_queries USING btree (name) WHERE (retired_at IS NULL);

CREATE INDEX stream_queries_retired_idx ON lethe.stream_queries USING btree (retired_at) WHERE (retired_at IS NOT NULL);

-- A streaming query's state per (query, source partition, key). updated_at
-- is the last cycle that wrote the key: keys idle past
-- STREAMS_STATE_IDLE_DAYS are purged. No cascade from stream_queries: a
-- retired query's state goes in bounded steps.
CREATE TABLE lethe.stream_state (
    query_id uuid NOT NULL,
    partition_id uuid NOT NULL,
    key text NOT NULL,
    value jsonb NOT NULL,
    updated_at timestamp with time zone NOT NULL
);

ALTER TABLE ONLY lethe.stream_state
    ADD CONSTRAINT stream_state_pkey PRIMARY KEY (query_id, partition_id, key);

CREATE INDEX stream_state_updated_idx ON lethe.stream_state USING btree (updated_at);

ALTER TABLE ONLY lethe.stream_state
    ADD CONSTRAINT stream_state_query_id_fkey FOREIGN KEY (query_id) REFERENCES lethe.stream_queries(id);

-- ======================================================================
-- Traces
-- ======================================================================

-- Message traces (Queen's /api/v1/traces): events a consumer records
-- against a message it processed, with optional names to find them by.
-- Kept TRACES_RETENTION_DAYS by created_at, purged in bounded steps.
CREATE TABLE lethe.traces (
    id uuid NOT NULL,
    partition_id uuid NOT NULL,
    transaction_id text NOT NULL,
    msg_offset bigint,
    consumer_group text NOT NULL,
    event_type text NOT NULL,
    data jsonb NOT NULL,
    names text[] DEFAULT '{}'::text[] NOT NULL,
    worker_id text,
    created_at timestamp with time zone NOT NULL
);

ALTER TABLE ONLY lethe.traces
    ADD CONSTRAINT traces_pkey PRIMARY KEY (id);

CREATE INDEX traces_created_idx ON lethe.traces USING btree (created_at);

CREATE INDEX traces_message_idx ON lethe.traces USING btree (partition_id, transaction_id, created_at);

CREATE INDEX traces_names_idx ON lethe.traces USING gin (names);

-- ======================================================================
-- Server-wide settings
-- ======================================================================

-- Durable server-wide switches shared by every replica (maintenance mode).
CREATE TABLE lethe.settings (
    key text NOT NULL,
    value jsonb NOT NULL,
    updated_at timestamp with time zone NOT NULL
);

ALTER TABLE ONLY lethe.settings
    ADD CONSTRAINT settings_pkey PRIMARY KEY (key);
