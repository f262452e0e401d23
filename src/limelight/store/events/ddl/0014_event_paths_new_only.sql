-- 0008's view, writing only the paths and types its tenant's dataset has not
-- recorded yet. The old one wrote every path of every INSERT: a part of its own
-- (a dozen files, their syncs, later merges) for each INSERT, however small,
-- and rows that grew with the INSERTs until merged (840 for 40 INSERTs of the
-- same 21 paths and types, merges stopped; 21 now, in one part). Inside a view,
-- `events` is the inserted block, so the lookup reads the recorded rows of the
-- block's tenants and paths only, by a prefix of the table's key: for a tenant
-- with 500,000 recorded rows a 1-event INSERT reads 8,352 of them and takes 23 ms
-- against 19 ms with the old view (medians of 20 in turns; keyed by the tenant
-- alone it read all 500,000 in 200 ms). Two INSERTs
-- at once may both record a new path: the table replaces duplicates, and
-- readers take distinct types anyway. Made before the old view goes, so no
-- insert between the two statements goes unrecorded.
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
    WHERE (workspace_id, environment_id, path) IN
    (
        SELECT workspace_id, environment_id, arrayJoin(distinctJSONPaths(data))
        FROM {db}.events{local}
        GROUP BY workspace_id, environment_id
    )
)
;
DROP VIEW IF EXISTS {db}.event_paths_by_dataset_on_insert{on_cluster}
