-- Replaced by 0008, which records the same paths with their dataset.
DROP VIEW IF EXISTS {db}.event_paths_on_insert{on_cluster}
