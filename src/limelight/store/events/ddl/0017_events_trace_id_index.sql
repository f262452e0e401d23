-- A bloom filter of each granule's trace ids (their 64-bit hash, as the trace search
-- groups them): a trace's spans are found without reading every trace id of the
-- timeframe. The trace search checks whether the newest traces of a window have a
-- span before it (query.traces) and gathers its page's traces whole through it;
-- 0.1% false positives keep a check of 40 traces to about 4% of the granules, for
-- about 15 bits an event. Parts written before this file are indexed by the
-- mutation below, in the background; until then they are read, with the same answers.
ALTER TABLE {db}.events{local}{on_cluster} ADD INDEX IF NOT EXISTS trace_ids cityHash64(data.traceId.:String) TYPE bloom_filter(0.001) GRANULARITY 1
;
ALTER TABLE {db}.events{local}{on_cluster} MATERIALIZE INDEX trace_ids
