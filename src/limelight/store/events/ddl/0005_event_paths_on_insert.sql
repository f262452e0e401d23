-- Part of every INSERT into events: the paths and types of the inserted block,
-- written before the INSERT returns, so an acknowledged event's types are known
-- to the next query.
CREATE MATERIALIZED VIEW IF NOT EXISTS {db}.event_paths_on_insert{on_cluster} TO {db}.event_paths{local} AS
SELECT workspace_id, environment_id, p.1 AS path, arrayJoin(p.2) AS type
FROM
(
    SELECT workspace_id, environment_id, distinctJSONPathsAndTypes(data) AS m
    FROM {db}.events{local}
    GROUP BY workspace_id, environment_id
)
ARRAY JOIN m AS p
