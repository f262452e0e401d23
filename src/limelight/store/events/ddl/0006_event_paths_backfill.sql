-- The paths of the events stored before 0005 (events inserted since are covered
-- by the view): the view's own SELECT, over the whole table.
INSERT INTO {db}.event_paths
SELECT workspace_id, environment_id, p.1 AS path, arrayJoin(p.2) AS type
FROM
(
    SELECT workspace_id, environment_id, distinctJSONPathsAndTypes(data) AS m
    FROM {db}.events
    GROUP BY workspace_id, environment_id
)
ARRAY JOIN m AS p
