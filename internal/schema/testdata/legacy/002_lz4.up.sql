-- Let TOAST compress segment payloads with lz4 where the server was built
-- with it (pglz otherwise): frames of JSON compress well.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_settings
               WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)) THEN
        ALTER TABLE lethe.segments ALTER COLUMN frames SET COMPRESSION lz4;
    END IF;
END $$;
