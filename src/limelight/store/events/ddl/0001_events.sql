-- Every event of every tenant lives in one table. Typed columns carry what every
-- query touches (tenant, dataset, service, namespace, time); `raw` keeps the
-- event exactly as accepted, because the JSON column does not round-trip
-- (dotted keys come back nested, nulls and empty objects are dropped);
-- `data` is the same event parsed by ClickHouse, for fast path access.
CREATE TABLE IF NOT EXISTS {db}.events{local}{on_cluster}
(
    workspace_id   LowCardinality(String),
    environment_id LowCardinality(String),
    dataset        LowCardinality(String),
    service        LowCardinality(String),
    namespace      LowCardinality(String),
    timestamp      DateTime64(3, 'UTC') CODEC(Delta, ZSTD(1)),
    id             String,
    raw            String CODEC(ZSTD(1)),
    data           JSON(max_dynamic_paths = 256) MATERIALIZED raw::JSON
)
ENGINE = {replicated}MergeTree
PARTITION BY toDate(timestamp)
ORDER BY (workspace_id, environment_id, dataset, timestamp)
;
-- cluster only: the table every query reads and every insert writes, over the
-- shards' events_local; events spread over the shards at random.
CREATE TABLE IF NOT EXISTS {db}.events{on_cluster} AS {db}.events_local
ENGINE = Distributed({cluster}, {db}, events_local, rand())
