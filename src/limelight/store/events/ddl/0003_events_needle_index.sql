-- Needle searches (free text over the stored JSON) read every byte of `raw`
-- unless something rules granules out: a bloom filter of the 4-byte ngrams of
-- lower(raw) per granule lets `lower(raw) LIKE '%needle%'` skip every granule
-- that cannot hold the needle. Parts written before this index have none and
-- are scanned as before (MATERIALIZE INDEX builds it for them).
ALTER TABLE {db}.events{local}{on_cluster} ADD INDEX IF NOT EXISTS raw_ngrams lower(raw) TYPE ngrambf_v1(4, 65536, 3, 0) GRANULARITY 1
