-- `data` compressed with ZSTD, as `raw` is, rather than the engine's default LZ4. What
-- it saves depends on the events: 60,000 of the ingest bench's (random ids, durations
-- and sizes) merged into one part, `data` weighed 0.252 of the NDJSON's bytes with LZ4
-- and 0.116 with ZSTD(1), the table 0.476 against 0.340, at the same insert rate; the
-- queries bench's 10M generated events, more regular, weigh 0.116 either way.
-- bench/storage.py weighs both and times the queries bench on each. Parts written
-- before this file keep LZ4 until they are merged.
ALTER TABLE {db}.events{local}{on_cluster} MODIFY COLUMN data JSON(max_dynamic_paths = 256) MATERIALIZED raw::JSON CODEC(ZSTD(1))
