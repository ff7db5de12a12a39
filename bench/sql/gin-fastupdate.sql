-- The sidecar's GIN index with and without fastupdate, in raw SQL (bench/gin-fastupdate.sh):
-- 100,000 rows of 100 random 64-bit hashes (10 M keys), then flush_off / flush_on
-- do what lethe.append does to the sidecar for one 100-frame flush: probe the
-- index with the batch's hashes (&&), then insert them as one row.
CREATE TABLE t_off (pid int NOT NULL, hashes bigint[] NOT NULL);
CREATE TABLE t_on (pid int NOT NULL, hashes bigint[] NOT NULL);
INSERT INTO t_off SELECT (random()*100)::int, (SELECT array_agg((random()*9e18)::bigint) FROM generate_series(1,100) WHERE g > 0) FROM generate_series(1,100000) g;
INSERT INTO t_on SELECT * FROM t_off;
CREATE INDEX ON t_off USING gin (hashes) WITH (fastupdate = off);
CREATE INDEX ON t_on USING gin (hashes) WITH (fastupdate = on, gin_pending_list_limit = 256);
CREATE FUNCTION flush_off(p int) RETURNS bigint LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE h bigint[]; n bigint;
BEGIN
  SELECT array_agg((random()*9e18)::bigint) INTO h FROM generate_series(1,100);
  SELECT count(*) INTO n FROM t_off WHERE hashes && h AND pid = p;
  INSERT INTO t_off VALUES (p, h);
  RETURN n;
END $$;
CREATE FUNCTION flush_on(p int) RETURNS bigint LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE h bigint[]; n bigint;
BEGIN
  SELECT array_agg((random()*9e18)::bigint) INTO h FROM generate_series(1,100);
  SELECT count(*) INTO n FROM t_on WHERE hashes && h AND pid = p;
  INSERT INTO t_on VALUES (p, h);
  RETURN n;
END $$;
CREATE FUNCTION gen_only(p int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE h bigint[];
BEGIN
  SELECT array_agg((random()*9e18)::bigint) INTO h FROM generate_series(1,100);
  RETURN cardinality(h);
END $$;
VACUUM ANALYZE t_off; VACUUM ANALYZE t_on;
