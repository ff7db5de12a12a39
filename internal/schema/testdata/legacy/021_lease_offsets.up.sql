-- A lease names the offsets it handed out (lease_offsets, ascending) and the
-- transaction-id hash of each (lease_hashes, the sidecar's 64 bits of
-- SHA-256), instead of a range of offsets and the transaction ids as text:
--   * offsets need not be contiguous (retention gaps, and later a held area
--     in front of the live log), so a lease holds only what it delivered;
--   * a transaction id is any bytes a frame holds: text[] refused a NUL and
--     so made every pop of a queue fail; a hash is always storable, and
--     8 bytes instead of the id keeps the cursor row (written by every pop
--     and ack) small.
-- lease_from and lease_to stay: the first and last leased offsets, read by
-- the admin views.
ALTER TABLE lethe.cursors ADD COLUMN lease_offsets bigint[], ADD COLUMN lease_hashes bigint[];

-- Live leases carry over: the offsets whose transaction id was known (the
-- others were retention gaps, which no longer belong to a lease).
WITH converted AS (
    SELECT c.partition_id, c.group_name,
           array_agg(c.lease_from + u.i - 1 ORDER BY u.i) AS offs,
           array_agg(('x' || left(encode(sha256(convert_to(u.t, 'UTF8')), 'hex'), 16))::bit(64)::bigint
                     ORDER BY u.i) AS hashes
      FROM lethe.cursors c, unnest(c.lease_txns) WITH ORDINALITY AS u(t, i)
     WHERE c.lease_id IS NOT NULL AND u.t <> ''
     GROUP BY c.partition_id, c.group_name)
UPDATE lethe.cursors c
   SET lease_offsets = v.offs, lease_hashes = v.hashes,
       lease_from = v.offs[1], lease_to = v.offs[cardinality(v.offs)],
       lease_done = ARRAY(SELECT d FROM unnest(c.lease_done) AS d WHERE d = ANY (v.offs)),
       lease_fail = ARRAY(SELECT f FROM unnest(c.lease_fail) AS f WHERE f = ANY (v.offs))
  FROM converted v
 WHERE c.partition_id = v.partition_id AND c.group_name = v.group_name;

-- A lease with no message left in it has nothing to ack: released.
UPDATE lethe.cursors
   SET lease_id = NULL, lease_from = NULL, lease_to = NULL, lease_until = NULL,
       lease_done = NULL, lease_fail = NULL, lease_error = NULL
 WHERE lease_id IS NOT NULL AND lease_offsets IS NULL;

ALTER TABLE lethe.cursors DROP COLUMN lease_txns;

-- A dead letter copies a message's payload into jsonb. Whatever a segment
-- holds must not make that copy fail (and with it the ack or pop that
-- dead-letters): a payload jsonb refuses (a \u0000 escape, a lone
-- surrogate, bytes that are not JSON) is kept as NULL, and the dead
-- letter's error says so. The subtransaction this costs is paid only when
-- dead-lettering.
CREATE FUNCTION lethe.jsonb_or_null(p_text text) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    RETURN p_text::jsonb;
EXCEPTION WHEN others THEN
    RETURN NULL;
END $$;

REVOKE ALL ON FUNCTION lethe.jsonb_or_null(text) FROM PUBLIC;
