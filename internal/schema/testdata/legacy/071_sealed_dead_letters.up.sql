-- A dead letter of a queue with encryptionEnabled keeps its payload sealed
-- (package seal: AES-256-GCM under QUEEN_ENCRYPTION_KEY), as its segment
-- does: payload stays NULL and payload_sealed holds the sealed bytes, so no
-- table holds the payload in clear. Listing and replaying dead letters open
-- it again.
ALTER TABLE lethe.dead_letters ADD COLUMN payload_sealed bytea;
