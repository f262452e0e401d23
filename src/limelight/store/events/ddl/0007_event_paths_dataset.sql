-- The keys of a dataset (the console and GET /v1/datasets/<name>/keys): event_paths
-- records the dataset too. A column added by the same ALTER may end the sort key;
-- rows written before it have the dataset '' (0010 records them again by dataset).
ALTER TABLE {db}.event_paths{local}{on_cluster} ADD COLUMN IF NOT EXISTS dataset LowCardinality(String) AFTER environment_id, MODIFY ORDER BY (workspace_id, environment_id, path, type, dataset)
;
-- cluster only: the Distributed table reads the new column too.
ALTER TABLE {db}.event_paths{on_cluster} ADD COLUMN IF NOT EXISTS dataset LowCardinality(String) AFTER environment_id
