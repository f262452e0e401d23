-- What the reads over spans need of each span, as typed columns computed from `data`
-- as a part is written (query.spans, SpanSql): the trace id's 64-bit hash, as the trace
-- search groups traces (0 without a trace id as a string); the duration in ms, whatever
-- number type it is stored as (NULL without one); whether the event is a span (a trace
-- id and a kind as non-empty strings), a root (no parent span id), a failed span
-- (status.code ERROR), an entry span (kind SERVER or CONSUMER). Reading `kind` and
-- `duration` from the JSON column dominated the slowest traces of a service; a column
-- of 1 to 8 bytes an event is read instead (62 MB on disk for 11M spans, beside 1 GB
-- for `raw`, `data` and `id`). Each expression is what the reads computed
-- from `data`, so a part written before this file (whose columns are computed when it
-- is read, until the mutation below has written them, in the background) gives the
-- same answers. The Distributed table reads the shards' columns by name: it holds them
-- too, with the same expressions, as it holds `data`.
-- cluster: the Distributed table too
ALTER TABLE {db}.events{local}{on_cluster}
    ADD COLUMN IF NOT EXISTS trace_hash UInt64 MATERIALIZED ifNull(cityHash64(data.traceId.:String), 0),
    ADD COLUMN IF NOT EXISTS span_duration Nullable(Float64) MATERIALIZED coalesce(toFloat64(data.duration.:Int64), data.duration.:Float64, toFloat64(data.duration.:UInt64)),
    ADD COLUMN IF NOT EXISTS is_span UInt8 MATERIALIZED ifNull(data.traceId.:String != '' AND data.kind.:String != '', 0),
    ADD COLUMN IF NOT EXISTS is_root_span UInt8 MATERIALIZED ifNull(data.parentSpanId.:String, '') = '',
    ADD COLUMN IF NOT EXISTS is_error_span UInt8 MATERIALIZED ifNull(data.status.code.:String = 'ERROR', 0),
    ADD COLUMN IF NOT EXISTS is_entry_span UInt8 MATERIALIZED ifNull(data.kind.:String IN ('SERVER', 'CONSUMER'), 0)
;
-- The trace ids' bloom filter (0017) over the hash column rather than an expression over
-- `data`: the reads look traces up by the column, and the index is only used by a
-- condition on its own expression.
ALTER TABLE {db}.events{local}{on_cluster} ADD INDEX IF NOT EXISTS trace_hashes trace_hash TYPE bloom_filter(0.001) GRANULARITY 1
;
ALTER TABLE {db}.events{local}{on_cluster} DROP INDEX IF EXISTS trace_ids
;
ALTER TABLE {db}.events{local}{on_cluster}
    MATERIALIZE COLUMN trace_hash,
    MATERIALIZE COLUMN span_duration,
    MATERIALIZE COLUMN is_span,
    MATERIALIZE COLUMN is_root_span,
    MATERIALIZE COLUMN is_error_span,
    MATERIALIZE COLUMN is_entry_span
;
ALTER TABLE {db}.events{local}{on_cluster} MATERIALIZE INDEX trace_hashes
