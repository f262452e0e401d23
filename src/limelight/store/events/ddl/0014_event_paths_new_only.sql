-- 0008's view, writing only the paths and types its tenant's dataset has not
-- recorded yet. The old one wrote every path of every INSERT: a part of its own
-- (a dozen files, their syncs, later merges) for each INSERT, however small,
-- and a table that grew with the INSERTs (1,560 rows for 40 INSERTs of 21
-- paths, where 21 say the same) until merged. Inside a view, `events` is the
-- inserted block, so the lookup reads the recorded rows of the block's tenants
-- only, by the table's key (4 marks for the 21 rows above, whatever the events
-- table holds). Two INSERTs at once may both record a new path: the table
-- replaces duplicates, and readers take distinct types anyway. Made before the
-- old view goes, so no insert between the two statements goes unrecorded.
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.event_paths_new_on_insert{on_cluster} TO {db}.event_paths{local} AS
SELECT workspace_id, environment_id, dataset, path, type
FROM
(
    SELECT workspace_id, environment_id, dataset, p.1 AS path, arrayJoin(p.2) AS type
    FROM
    (
        SELECT workspace_id, environment_id, dataset, distinctJSONPathsAndTypes(data) AS m
        FROM {db}.events{local}
        GROUP BY workspace_id, environment_id, dataset
    )
    ARRAY JOIN m AS p
)
WHERE (workspace_id, environment_id, dataset, path, type) NOT IN
(
    SELECT workspace_id, environment_id, dataset, path, type
    FROM {db}.event_paths{local}
    WHERE (workspace_id, environment_id) IN (SELECT workspace_id, environment_id FROM {db}.events{local})
)
;
DROP VIEW IF EXISTS {db}.event_paths_by_dataset_on_insert{on_cluster}
