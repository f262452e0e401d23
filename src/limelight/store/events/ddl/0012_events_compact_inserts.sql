-- A part holding under 32 MB (uncompressed) is written compact: one file for every
-- column, where a wide part writes files per column and per JSON path (hundreds for
-- `data`). An insert's part is compact up to about 12,000 events of 0.5 kB, a 6MB
-- body (the engine's default threshold, 10 MB, made such an insert wide); merges
-- still make the large parts queries read wide. Measured on 2 cores, 60,000 events
-- of 0.46 kB in inserts of 12,000, one session: 45k events/s against 28k wide.
ALTER TABLE {db}.events{local}{on_cluster} MODIFY SETTING min_bytes_for_wide_part = 33554432
