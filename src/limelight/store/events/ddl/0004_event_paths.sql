-- The types each JSON path of a tenant's events is stored as (`String`, `Int64`,
-- `Array(Dynamic)`, ..), written by ClickHouse itself as events arrive (0005), so
-- that a query reads only the types a key holds: reading an absent type still
-- costs a pass over the path (see query/keys.py). One row per tenant, path and
-- type once merged; until then reads deduplicate. Written to disk as surely as
-- the events (0002): a type lost in a crash would hide acknowledged events.
CREATE TABLE IF NOT EXISTS {db}.event_paths{local}{on_cluster}
(
    workspace_id   LowCardinality(String),
    environment_id LowCardinality(String),
    path           String,
    type           LowCardinality(String)
)
ENGINE = {replicated}ReplacingMergeTree
ORDER BY (workspace_id, environment_id, path, type)
SETTINGS fsync_after_insert = 1, fsync_part_directory = 1
;
-- cluster only: the table type lookups read, over the shards' event_paths_local.
CREATE TABLE IF NOT EXISTS {db}.event_paths{on_cluster} AS {db}.event_paths_local
ENGINE = Distributed({cluster}, {db}, event_paths_local, rand())
