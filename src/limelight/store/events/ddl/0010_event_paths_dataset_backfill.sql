-- The paths of the events stored before 0008, by dataset (as 0006 did without it).
-- The rows of dataset '' stay: a query's type lookup reads every dataset's rows,
-- and they hold nothing these do not.
INSERT INTO {db}.event_paths (workspace_id, environment_id, dataset, path, type)
SELECT workspace_id, environment_id, dataset, p.1 AS path, arrayJoin(p.2) AS type
FROM
(
    SELECT workspace_id, environment_id, dataset, distinctJSONPathsAndTypes(data) AS m
    FROM {db}.events
    GROUP BY workspace_id, environment_id, dataset
)
ARRAY JOIN m AS p
