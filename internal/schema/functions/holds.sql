CREATE OR REPLACE FUNCTION lethe.queue_held(p_queue bigint) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
    SELECT EXISTS (SELECT 1 FROM lethe.retention_holds h WHERE h.queue_id = p_queue AND h.released_at IS NULL)
$$;
REVOKE ALL ON FUNCTION lethe.queue_held(p_queue bigint) FROM PUBLIC;

CREATE OR REPLACE FUNCTION lethe.refuse_held_queue_delete() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF lethe.queue_held(OLD.id) THEN
        RAISE EXCEPTION 'queue % is under a retention hold', OLD.name
            USING ERRCODE = 'object_in_use', HINT = 'release its holds first (lethe retention holds)';
    END IF;
    RETURN OLD;
END $$;
REVOKE ALL ON FUNCTION lethe.refuse_held_queue_delete() FROM PUBLIC;

DROP TRIGGER IF EXISTS queues_refuse_held_delete ON lethe.queues;
CREATE TRIGGER queues_refuse_held_delete BEFORE DELETE ON lethe.queues FOR EACH ROW EXECUTE FUNCTION lethe.refuse_held_queue_delete();
