-- `data` compressed with ZSTD, as `raw` is, rather than the engine's default LZ4: the
-- values of one JSON path are alike from event to event, and ZSTD packs them to less
-- than half. Measured on 2 cores, 60,000 events of 0.46 kB merged into one part:
-- `data` 0.252 of the NDJSON's bytes with LZ4, 0.113 with ZSTD(1), and the table
-- 0.476 against 0.340, at the same insert rate; bench/storage.py times the queries
-- bench on both. Parts written before this file keep LZ4 until they are merged.
ALTER TABLE {db}.events{local}{on_cluster} MODIFY COLUMN data JSON(max_dynamic_paths = 256) MATERIALIZED raw::JSON CODEC(ZSTD(1))
