-- Lag, defined once: where every consumer group stands on every partition
-- of the queues it reads, and how many messages it has left there. The
-- API's consumer-group and status read models (internal/inspect) and the
-- Prometheus gauge lethe_queue_lag_messages (internal/metrics) both read
-- this view, so they cannot disagree.
--
-- A group belongs to a queue when it has a subscription to it or a cursor on
-- one of its partitions. Its first unconsumed offset on a partition is the
-- one lethe.group_positions (migration 011) says it wants next, the
-- definition completed retention uses: committed + 1 with a cursor; without
-- one, from its subscription start (offset 0 in mode all, else the first
-- segment whose newest frame is at or after its start time, else the next
-- offset). (The shortcut through last_push_at gives the same answer: no
-- segment of a partition is newer than its last push.) Nothing below the
-- low watermark is stored, so lag counts from there at the earliest.
CREATE VIEW lethe.group_lag AS
WITH members AS (
    SELECT s.queue_id, s.group_name FROM lethe.subscriptions s
    UNION
    SELECT p.queue_id, c.group_name FROM lethe.cursors c JOIN lethe.partitions p ON p.id = c.partition_id
), placed AS (
    SELECT m.group_name, q.id AS queue_id, q.name AS queue_name, p.id AS partition_id, p.name AS partition_name,
           p.next_offset, p.low_watermark, c.committed, c.lease_id, c.lease_until, c.last_pop_at,
           sub.mode, sub.from_at, sub.created_at AS subscribed_at,
           greatest(p.low_watermark, CASE
               WHEN c.partition_id IS NOT NULL THEN c.committed + 1
               WHEN sub.from_at IS NULL THEN 0
               WHEN p.last_push_at IS NULL OR p.last_push_at < sub.from_at THEN p.next_offset
               ELSE coalesce(lethe.store_offset_since(p.id, sub.from_at), p.next_offset)
           END) AS first_unconsumed
      FROM members m
      JOIN lethe.queues q ON q.id = m.queue_id
      LEFT JOIN lethe.partitions p ON p.queue_id = q.id
      LEFT JOIN lethe.cursors c ON c.partition_id = p.id AND c.group_name = m.group_name
      LEFT JOIN lethe.subscriptions sub ON sub.queue_id = q.id AND sub.group_name = m.group_name
)
SELECT pl.*, greatest(pl.next_offset - pl.first_unconsumed, 0) AS offset_lag
  FROM placed pl;

REVOKE ALL ON lethe.group_lag FROM PUBLIC;
