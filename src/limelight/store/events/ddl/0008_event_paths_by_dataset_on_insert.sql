-- 0005's view, per dataset. Made before the old view goes (0009), so that no
-- insert between the two files goes unrecorded.
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.event_paths_by_dataset_on_insert{on_cluster} TO {db}.event_paths{local} AS
SELECT workspace_id, environment_id, dataset, p.1 AS path, arrayJoin(p.2) AS type
FROM
(
    SELECT workspace_id, environment_id, dataset, distinctJSONPathsAndTypes(data) AS m
    FROM {db}.events{local}
    GROUP BY workspace_id, environment_id, dataset
)
ARRAY JOIN m AS p
