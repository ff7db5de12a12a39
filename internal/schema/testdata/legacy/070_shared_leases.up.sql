-- One pop may claim several partitions (?partitions=N) under one lease id,
-- as Queen's does: one extend renews them all, while each partition's
-- lease still settles with its own acks. So a lease id is no longer unique
-- to one cursor row; the index stays for extend's lookup by id.
DROP INDEX lethe.cursors_lease_idx;
CREATE INDEX cursors_lease_idx ON lethe.cursors (lease_id) WHERE lease_id IS NOT NULL;
