CREATE DATABASE IF NOT EXISTS limelight ON CLUSTER prod;

CREATE TABLE IF NOT EXISTS limelight.schema_versions ON CLUSTER prod (version UInt32, applied_at DateTime DEFAULT now()) ENGINE = ReplicatedMergeTree('/clickhouse/limelight/limelight/schema_versions', '{replica}') ORDER BY version SETTINGS fsync_after_insert = 1, fsync_part_directory = 1;

-- 0001
-- Every event of every tenant lives in one table. Typed columns carry what every
-- query touches (tenant, dataset, service, namespace, time); `raw` keeps the
-- event exactly as accepted, because the JSON column does not round-trip
-- (dotted keys come back nested, nulls and empty objects are dropped);
-- `data` is the same event parsed by ClickHouse, for fast path access.
CREATE TABLE IF NOT EXISTS limelight.events_local ON CLUSTER prod
(
    workspace_id   LowCardinality(String),
    environment_id LowCardinality(String),
    dataset        LowCardinality(String),
    service        LowCardinality(String),
    namespace      LowCardinality(String),
    timestamp      DateTime64(3, 'UTC') CODEC(Delta, ZSTD(1)),
    id             String,
    raw            String CODEC(ZSTD(1)),
    data           JSON(max_dynamic_paths = 256) MATERIALIZED raw::JSON
)
ENGINE = ReplicatedMergeTree
PARTITION BY toDate(timestamp)
ORDER BY (workspace_id, environment_id, dataset, timestamp);

-- 0001
-- cluster only: the table every query reads and every insert writes, over the
-- shards' events_local; events spread over the shards at random.
CREATE TABLE IF NOT EXISTS limelight.events ON CLUSTER prod AS limelight.events_local
ENGINE = Distributed(prod, limelight, events_local, rand());

-- 0002
-- An acknowledged batch must survive a crash of the machine, not only of the
-- process: fsync each new part and its directory before the INSERT returns.
-- Measured on this 2-core machine: no throughput difference beyond noise for
-- 1,000-event and 6MB batches (see bench/ingest.py).
ALTER TABLE limelight.events_local ON CLUSTER prod MODIFY SETTING fsync_after_insert = 1, fsync_part_directory = 1;

-- 0003
-- Needle searches (free text over the stored JSON) read every byte of `raw`
-- unless something rules granules out: a bloom filter of the 4-byte ngrams of
-- lower(raw) per granule lets `lower(raw) LIKE '%needle%'` skip every granule
-- that cannot hold the needle. Parts written before this index have none and
-- are scanned as before (MATERIALIZE INDEX builds it for them).
ALTER TABLE limelight.events_local ON CLUSTER prod ADD INDEX IF NOT EXISTS raw_ngrams lower(raw) TYPE ngrambf_v1(4, 65536, 3, 0) GRANULARITY 1;

-- 0004
-- The types each JSON path of a tenant's events is stored as (`String`, `Int64`,
-- `Array(Dynamic)`, ..), written by ClickHouse itself as events arrive (0005), so
-- that a query reads only the types a key holds: reading an absent type still
-- costs a pass over the path (see query/keys.py). One row per tenant, path and
-- type once merged; until then reads deduplicate. Written to disk as surely as
-- the events (0002): a type lost in a crash would hide acknowledged events.
CREATE TABLE IF NOT EXISTS limelight.event_paths_local ON CLUSTER prod
(
    workspace_id   LowCardinality(String),
    environment_id LowCardinality(String),
    path           String,
    type           LowCardinality(String)
)
ENGINE = ReplicatedReplacingMergeTree
ORDER BY (workspace_id, environment_id, path, type)
SETTINGS fsync_after_insert = 1, fsync_part_directory = 1;

-- 0004
-- cluster only: the table type lookups read, over the shards' event_paths_local.
CREATE TABLE IF NOT EXISTS limelight.event_paths ON CLUSTER prod AS limelight.event_paths_local
ENGINE = Distributed(prod, limelight, event_paths_local, rand());

-- 0005
-- Part of every INSERT into events: the paths and types of the inserted block,
-- written before the INSERT returns, so an acknowledged event's types are known
-- to the next query.
CREATE MATERIALIZED VIEW IF NOT EXISTS limelight.event_paths_on_insert ON CLUSTER prod TO limelight.event_paths_local AS
SELECT workspace_id, environment_id, p.1 AS path, arrayJoin(p.2) AS type
FROM
(
    SELECT workspace_id, environment_id, distinctJSONPathsAndTypes(data) AS m
    FROM limelight.events_local
    GROUP BY workspace_id, environment_id
)
ARRAY JOIN m AS p;

-- 0006
-- The paths of the events stored before 0005 (events inserted since are covered
-- by the view): the view's own SELECT, over the whole table.
INSERT INTO limelight.event_paths
SELECT workspace_id, environment_id, p.1 AS path, arrayJoin(p.2) AS type
FROM
(
    SELECT workspace_id, environment_id, distinctJSONPathsAndTypes(data) AS m
    FROM limelight.events
    GROUP BY workspace_id, environment_id
)
ARRAY JOIN m AS p;

-- 0007
-- The keys of a dataset (the console and GET /v1/datasets/<name>/keys): event_paths
-- records the dataset too. A column added by the same ALTER may end the sort key;
-- rows written before it have the dataset '' (0010 records them again by dataset).
ALTER TABLE limelight.event_paths_local ON CLUSTER prod ADD COLUMN IF NOT EXISTS dataset LowCardinality(String) AFTER environment_id, MODIFY ORDER BY (workspace_id, environment_id, path, type, dataset);

-- 0007
-- cluster only: the Distributed table reads the new column too.
ALTER TABLE limelight.event_paths ON CLUSTER prod ADD COLUMN IF NOT EXISTS dataset LowCardinality(String) AFTER environment_id;

-- 0008
-- 0005's view, per dataset. Made before the old view goes (0009), so that no
-- insert between the two files goes unrecorded.
CREATE MATERIALIZED VIEW IF NOT EXISTS limelight.event_paths_by_dataset_on_insert ON CLUSTER prod TO limelight.event_paths_local AS
SELECT workspace_id, environment_id, dataset, p.1 AS path, arrayJoin(p.2) AS type
FROM
(
    SELECT workspace_id, environment_id, dataset, distinctJSONPathsAndTypes(data) AS m
    FROM limelight.events_local
    GROUP BY workspace_id, environment_id, dataset
)
ARRAY JOIN m AS p;

-- 0009
-- Replaced by 0008, which records the same paths with their dataset.
DROP VIEW IF EXISTS limelight.event_paths_on_insert ON CLUSTER prod;

-- 0010
-- The paths of the events stored before 0008, by dataset (as 0006 did without it).
-- The rows of dataset '' stay: a query's type lookup reads every dataset's rows,
-- and they hold nothing these do not.
INSERT INTO limelight.event_paths (workspace_id, environment_id, dataset, path, type)
SELECT workspace_id, environment_id, dataset, p.1 AS path, arrayJoin(p.2) AS type
FROM
(
    SELECT workspace_id, environment_id, dataset, distinctJSONPathsAndTypes(data) AS m
    FROM limelight.events
    GROUP BY workspace_id, environment_id, dataset
)
ARRAY JOIN m AS p;

-- 0011
-- Needles of letters alone ("timeout", "Payment") are answered by an inverted
-- index instead of reading `raw`: the tokens of lower(raw) with every digit made
-- a space, so ids, times and numbers (the bulk of the distinct tokens of logs)
-- fall apart into a few short letter runs and the dictionary stays small. Such a
-- needle occurs in `raw` (ASCII case folded) exactly where it occurs in this text,
-- and always inside one token, so `... LIKE '%needle%'` is answered from the
-- index's dictionary (query.where.needle_sql). On 1M events: 5 ms for a word in
-- 2% of events against 84 ms by ngrams and reading, at 1.5 s of insert against
-- 3.6 s for the ngram index (bench/search.py measures it beside the queries).
-- Parts written before this file are indexed by the mutation below, in the
-- background; until then they are read, with the same answers.
ALTER TABLE limelight.events_local ON CLUSTER prod ADD INDEX IF NOT EXISTS raw_words translate(lower(raw), '0123456789', '          ') TYPE text(tokenizer = 'splitByNonAlpha');

-- 0011
ALTER TABLE limelight.events_local ON CLUSTER prod MATERIALIZE INDEX raw_words;

-- 0012
-- A part holding under 32 MB (uncompressed) is written compact: one file for every
-- column, where a wide part writes files per column and per JSON path (hundreds for
-- `data`). An insert's part is compact up to about 12,000 events of 0.5 kB, a 6MB
-- body (the engine's default threshold, 10 MB, made such an insert wide); merges
-- still make the large parts queries read wide. Measured on 2 cores, 60,000 events
-- of 0.46 kB in inserts of 12,000, one session: 45k events/s against 28k wide.
ALTER TABLE limelight.events_local ON CLUSTER prod MODIFY SETTING min_bytes_for_wide_part = 33554432;

-- 0013
-- A merge writes its part without fsync, and the embedded engine removes the
-- parts it merged 30 seconds to 5 minutes later (its old_parts_lifetime is 0,
-- where a server keeps them 480 s; its cleanup waits longer while idle), about
-- when the kernel writes dirty pages back: a machine crash in between could lose
-- acknowledged events that only the merged part held. Each merged part is synced
-- before it replaces its sources, as an insert's is (0002); so is a mutation's
-- (the lightweight deletes of retention). Measured on 2 cores, 240 inserts of
-- 100 events and the merges they cause, in turns: 607 and 680 µs of CPU an event
-- against 721 and 812 without, where runs of one version spread from 470 to 810;
-- no cost found.
ALTER TABLE limelight.events_local ON CLUSTER prod MODIFY SETTING min_rows_to_fsync_after_merge = 1;

-- 0013
-- The types of each path (0004), which a query needs to see those events.
ALTER TABLE limelight.event_paths_local ON CLUSTER prod MODIFY SETTING min_rows_to_fsync_after_merge = 1;

-- 0014
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
CREATE MATERIALIZED VIEW IF NOT EXISTS limelight.event_paths_new_on_insert ON CLUSTER prod TO limelight.event_paths_local AS
SELECT workspace_id, environment_id, dataset, path, type
FROM
(
    SELECT workspace_id, environment_id, dataset, p.1 AS path, arrayJoin(p.2) AS type
    FROM
    (
        SELECT workspace_id, environment_id, dataset, distinctJSONPathsAndTypes(data) AS m
        FROM limelight.events_local
        GROUP BY workspace_id, environment_id, dataset
    )
    ARRAY JOIN m AS p
)
WHERE (workspace_id, environment_id, dataset, path, type) NOT IN
(
    SELECT workspace_id, environment_id, dataset, path, type
    FROM limelight.event_paths_local
    WHERE (workspace_id, environment_id, path) IN
    (
        SELECT workspace_id, environment_id, arrayJoin(distinctJSONPaths(data))
        FROM limelight.events_local
        GROUP BY workspace_id, environment_id
    )
);

-- 0014
DROP VIEW IF EXISTS limelight.event_paths_by_dataset_on_insert ON CLUSTER prod;

-- 0015
-- Needles with more than letters ("payment failed", "card_declined", "user.id",
-- "/api/cart", "issuer (order") are answered by a second inverted index instead of
-- reading `raw`: lower(raw) split at every digit and `"`, with every other printable
-- character that is not a letter spelled as a digit or a capital letter (which the
-- lowered text no longer holds), so the tokenizer keeps spaces and punctuation
-- inside a token. A token is a stretch between two digits or quotes (a message's
-- words with their punctuation, a path, a key), and a needle with no digit, quote or
-- control character occurs in `raw` (ASCII case folded) exactly where its spelling
-- occurs here, inside one token: `... LIKE '%spelling%'` is answered from the
-- index's dictionary (query.needle). Ids and numbers fall apart at their digits, so
-- the dictionary stays as small as the words index's (60,496 tokens for 1M events
-- of API logs, 18 MB; 3.1M tokens and 88 MB when digits stay in tokens).
-- Parts written before this file are indexed by the mutation below, in the
-- background; until then they are read, with the same answers.
ALTER TABLE limelight.events_local ON CLUSTER prod ADD INDEX IF NOT EXISTS raw_phrases translate(lower(raw), '0123456789 !#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~', '""""""""""123456789ABCDEFGHIJKLMNOPQRSTUVW') TYPE text(tokenizer = 'splitByNonAlpha');

-- 0015
ALTER TABLE limelight.events_local ON CLUSTER prod MATERIALIZE INDEX raw_phrases;

-- 0016
-- Needles with numbers or quotes ("order 12", "ERR-42", "\"level\":\"error") are
-- answered by a third inverted index instead of reading `raw`: lower(raw) cut into
-- its stretches between digits, each with the first one or two digits after it when
-- it ends in a character that is not a letter (the rest of a number dropped), and
-- quotes with 25 other punctuation characters spelled as capitals so the tokenizer
-- keeps them inside a token. Such a needle occurs in `raw` (ASCII case folded)
-- exactly where its spelling occurs here, inside one token: `... LIKE '%spelling%'`
-- is answered from the index's dictionary (query.needle). Numbers cut to two digits
-- and hex ids' letters kept apart from their digits bound the dictionary: 132,890
-- tokens for 1M events of API logs (438,863 with the digits after letters kept too).
-- Parts written before this file are indexed by the mutation below, in the
-- background; until then they are read, with the same answers.
ALTER TABLE limelight.events_local ON CLUSTER prod ADD INDEX IF NOT EXISTS raw_numbers translate(arrayStringConcat(extractAll(lower(raw), '[^0-9]*[^0-9a-z][0-9]{1,2}|[^0-9]+'), '\x01'), '" !#%&\'()*+,-./:;=?@[]_{|}', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ') TYPE text(tokenizer = 'splitByNonAlpha');

-- 0016
ALTER TABLE limelight.events_local ON CLUSTER prod MATERIALIZE INDEX raw_numbers;

-- 0017
-- A bloom filter of each granule's trace ids (their 64-bit hash, as the trace search
-- groups them): a trace's spans are found without reading every trace id of the
-- timeframe. The trace search checks whether the newest traces of a window have a
-- span before it (query.traces) and gathers its page's traces whole through it;
-- 0.1% false positives keep a check of 40 traces to about 4% of the granules, for
-- about 15 bits an event. Parts written before this file are indexed by the
-- mutation below, in the background; until then they are read, with the same answers.
ALTER TABLE limelight.events_local ON CLUSTER prod ADD INDEX IF NOT EXISTS trace_ids cityHash64(data.traceId.:String) TYPE bloom_filter(0.001) GRANULARITY 1;

-- 0017
ALTER TABLE limelight.events_local ON CLUSTER prod MATERIALIZE INDEX trace_ids;

-- 0019
-- matchCase needles ("Payment failed", "NullPointerException", "OrderService.process",
-- "user_id=", "GET /api/cart") are answered by a fourth inverted index instead of
-- reading `raw`: raw as written (letters in their case), split at every digit and `"`,
-- with the ten characters ` ._-/:,=()` spelled as the digits, which the text no longer
-- holds, so the tokenizer keeps them inside a token; the rest of the punctuation cuts
-- tokens (the letters are the text's own, so only the digits are free to spell with).
-- A matchCase needle of letters and those ten characters occurs in `raw` exactly where
-- its spelling occurs here, inside one token: `... LIKE '%spelling%'` is answered from
-- the index's dictionary, whose scan keeps case (query.needle); one with other
-- characters is narrowed by its stretches here before `raw` is read.
-- Parts written before this file are indexed by the mutation below, in the
-- background; until then they are read, with the same answers.
ALTER TABLE limelight.events_local ON CLUSTER prod ADD INDEX IF NOT EXISTS raw_cased translate(raw, '0123456789 ._-/:,=()', '""""""""""0123456789') TYPE text(tokenizer = 'splitByNonAlpha');

-- 0019
ALTER TABLE limelight.events_local ON CLUSTER prod MATERIALIZE INDEX raw_cased;

-- 0020
-- What the reads over spans need of each span, as typed columns computed from `data`
-- as a part is written (query.spans, SpanSql): the trace id's 64-bit hash, as the trace
-- search groups traces (0 without a trace id as a string); the duration in ms, whatever
-- number type it is stored as (NULL without one); whether the event is a span (a trace
-- id and a kind as non-empty strings), a root (no parent span id), a failed span
-- (status.code ERROR), an entry span (kind SERVER or CONSUMER). Reading `kind` and
-- `duration` from the JSON column dominated the slowest traces of a service; a column
-- of 1 to 8 bytes an event is read instead (62 MB on disk for 11M spans, beside 1 GB
-- for `raw`, `data` and `id`). Each expression is what the reads computed
-- from `data`, so a part written before this file (whose columns are computed when it
-- is read, until the mutation below has written them, in the background) gives the
-- same answers. The Distributed table reads the shards' columns by name: it holds them
-- too, with the same expressions, as it holds `data`.
-- cluster: the Distributed table too
ALTER TABLE limelight.events_local ON CLUSTER prod
    ADD COLUMN IF NOT EXISTS trace_hash UInt64 MATERIALIZED ifNull(cityHash64(data.traceId.:String), 0),
    ADD COLUMN IF NOT EXISTS span_duration Nullable(Float64) MATERIALIZED coalesce(toFloat64(data.duration.:Int64), data.duration.:Float64, toFloat64(data.duration.:UInt64)),
    ADD COLUMN IF NOT EXISTS is_span UInt8 MATERIALIZED ifNull(data.traceId.:String != '' AND data.kind.:String != '', 0),
    ADD COLUMN IF NOT EXISTS is_root_span UInt8 MATERIALIZED ifNull(data.parentSpanId.:String, '') = '',
    ADD COLUMN IF NOT EXISTS is_error_span UInt8 MATERIALIZED ifNull(data.status.code.:String = 'ERROR', 0),
    ADD COLUMN IF NOT EXISTS is_entry_span UInt8 MATERIALIZED ifNull(data.kind.:String IN ('SERVER', 'CONSUMER'), 0);

-- 0020
-- What the reads over spans need of each span, as typed columns computed from `data`
-- as a part is written (query.spans, SpanSql): the trace id's 64-bit hash, as the trace
-- search groups traces (0 without a trace id as a string); the duration in ms, whatever
-- number type it is stored as (NULL without one); whether the event is a span (a trace
-- id and a kind as non-empty strings), a root (no parent span id), a failed span
-- (status.code ERROR), an entry span (kind SERVER or CONSUMER). Reading `kind` and
-- `duration` from the JSON column dominated the slowest traces of a service; a column
-- of 1 to 8 bytes an event is read instead (62 MB on disk for 11M spans, beside 1 GB
-- for `raw`, `data` and `id`). Each expression is what the reads computed
-- from `data`, so a part written before this file (whose columns are computed when it
-- is read, until the mutation below has written them, in the background) gives the
-- same answers. The Distributed table reads the shards' columns by name: it holds them
-- too, with the same expressions, as it holds `data`.
-- cluster: the Distributed table too
ALTER TABLE limelight.events ON CLUSTER prod
    ADD COLUMN IF NOT EXISTS trace_hash UInt64 MATERIALIZED ifNull(cityHash64(data.traceId.:String), 0),
    ADD COLUMN IF NOT EXISTS span_duration Nullable(Float64) MATERIALIZED coalesce(toFloat64(data.duration.:Int64), data.duration.:Float64, toFloat64(data.duration.:UInt64)),
    ADD COLUMN IF NOT EXISTS is_span UInt8 MATERIALIZED ifNull(data.traceId.:String != '' AND data.kind.:String != '', 0),
    ADD COLUMN IF NOT EXISTS is_root_span UInt8 MATERIALIZED ifNull(data.parentSpanId.:String, '') = '',
    ADD COLUMN IF NOT EXISTS is_error_span UInt8 MATERIALIZED ifNull(data.status.code.:String = 'ERROR', 0),
    ADD COLUMN IF NOT EXISTS is_entry_span UInt8 MATERIALIZED ifNull(data.kind.:String IN ('SERVER', 'CONSUMER'), 0);

-- 0020
-- The trace ids' bloom filter (0017) over the hash column rather than an expression over
-- `data`: the reads look traces up by the column, and the index is only used by a
-- condition on its own expression.
ALTER TABLE limelight.events_local ON CLUSTER prod ADD INDEX IF NOT EXISTS trace_hashes trace_hash TYPE bloom_filter(0.001) GRANULARITY 1;

-- 0020
ALTER TABLE limelight.events_local ON CLUSTER prod DROP INDEX IF EXISTS trace_ids;

-- 0020
ALTER TABLE limelight.events_local ON CLUSTER prod
    MATERIALIZE COLUMN trace_hash,
    MATERIALIZE COLUMN span_duration,
    MATERIALIZE COLUMN is_span,
    MATERIALIZE COLUMN is_root_span,
    MATERIALIZE COLUMN is_error_span,
    MATERIALIZE COLUMN is_entry_span;

-- 0020
ALTER TABLE limelight.events_local ON CLUSTER prod MATERIALIZE INDEX trace_hashes;

-- 0021
-- Each part keeps two summaries of its traces by the hour (aggregate projections), which
-- the slowest traces of a timeframe read for its whole hours instead of every span
-- (query.traces, the hours): `trace_hours`, per trace and hour, its first span's time
-- and its spans' last end within the hour (ms past the hour: small numbers, so the sum
-- keeps the duration's digits); `trace_services`, which services each trace has spans
-- of in the hour, to find the traces of the searched services. A trace of four spans
-- over two services is one row of the first, two of the second. Over 10M spans the
-- statement that picks the slowest traces of a service reads 2.75M and 2.6M summary
-- rows (45 and 42 MB on disk for 11M spans) rather than every span twice: 0.35 s
-- against 0.58 s (query.traces). The engine
-- builds them as it writes and merges a part; parts written before this file get them
-- from the mutation below, in the background, and are read span by span until then,
-- with the same answers.
ALTER TABLE limelight.events_local ON CLUSTER prod ADD PROJECTION IF NOT EXISTS trace_hours (
    SELECT workspace_id, environment_id, dataset, intDiv(toUnixTimestamp64Milli(timestamp), 3600000),
           is_span, trace_hash,
           min(timestamp), max(toUnixTimestamp64Milli(timestamp) % 3600000 + ifNull(span_duration, 0))
    GROUP BY workspace_id, environment_id, dataset, intDiv(toUnixTimestamp64Milli(timestamp), 3600000),
             is_span, trace_hash
);

-- 0021
-- The service comes before the hour: a projection's rows are sorted by its keys, so
-- the rows of the searched services are a range of them (over 10M spans, the slowest
-- traces of a service took 0.35 s this way, 0.38 s with the hour first).
ALTER TABLE limelight.events_local ON CLUSTER prod ADD PROJECTION IF NOT EXISTS trace_services (
    SELECT workspace_id, environment_id, dataset, service,
           intDiv(toUnixTimestamp64Milli(timestamp), 3600000), is_span, trace_hash
    GROUP BY workspace_id, environment_id, dataset, service,
             intDiv(toUnixTimestamp64Milli(timestamp), 3600000), is_span, trace_hash
);

-- 0021
-- Retention and a tenant's removal delete rows with lightweight DELETE (store.events
-- .expiry), which the engine refuses on a table with projections unless told what to do
-- with them: rebuild the summaries of the parts a DELETE touched, so they never count a
-- deleted span.
ALTER TABLE limelight.events_local ON CLUSTER prod MODIFY SETTING lightweight_mutation_projection_mode = 'rebuild';

-- 0021
ALTER TABLE limelight.events_local ON CLUSTER prod MATERIALIZE PROJECTION trace_hours;

-- 0021
ALTER TABLE limelight.events_local ON CLUSTER prod MATERIALIZE PROJECTION trace_services;

-- 0022
-- The slowest traces of a timeframe are first drawn from a summary of whole hours, the
-- hours the timeframe touches, read as one pass (query.traces, the drawn page): per
-- trace and hour its first span's time, its spans' last end within the hour, as
-- `trace_hours` (0021) kept them, and its spans' last end in ms since the epoch, which
-- the draw groups over every hour of a trace at once. This projection replaces
-- `trace_hours`: one summary of the same rows with one column more, so an INSERT still
-- builds two. Over 1M spans (four to a trace) the slowest traces of a service took
-- 156 ms against 198 ms through the API (2.50x a COUNT by service against 3.24x, in
-- turns): two reads of the timeframe's edges fewer, and one grouping instead of two.
-- Parts written before this file get it from the mutation below, in the background, and
-- are read span by span until then, with the same answers.
ALTER TABLE limelight.events_local ON CLUSTER prod ADD PROJECTION IF NOT EXISTS trace_ends (
    SELECT workspace_id, environment_id, dataset, intDiv(toUnixTimestamp64Milli(timestamp), 3600000),
           is_span, trace_hash,
           min(timestamp), max(toUnixTimestamp64Milli(timestamp) % 3600000 + ifNull(span_duration, 0)),
           max(toUnixTimestamp64Milli(timestamp) + ifNull(span_duration, 0))
    GROUP BY workspace_id, environment_id, dataset, intDiv(toUnixTimestamp64Milli(timestamp), 3600000),
             is_span, trace_hash
);

-- 0022
ALTER TABLE limelight.events_local ON CLUSTER prod MATERIALIZE PROJECTION trace_ends;

-- 0022
ALTER TABLE limelight.events_local ON CLUSTER prod DROP PROJECTION IF EXISTS trace_hours;

-- 0023
-- matchCase needles with numbers or quotes ("code ERR-42", "\"level\":\"Error",
-- "HTTP/1", "[Retry]") are answered by a fifth inverted index instead of reading
-- `raw`: the numbers index's cut (DDL 0016) of raw as written, letters in their case.
-- No character is free to spell with there (the letters are the text's, digits are
-- kept), so its 26 characters are written as three each (`0`, a lowercase letter,
-- `1`) and each kept digit as two (`9`, the digit): a code that no needle can meet
-- from inside (query.needle says why). Such a needle occurs in `raw` exactly where its
-- spelling occurs here, inside one token: `... LIKE '%spelling%'` is answered from the
-- index's dictionary, whose scan keeps case.
-- Parts written before this file are indexed by the mutation below, in the
-- background; until then they are read, with the same answers.
ALTER TABLE limelight.events_local ON CLUSTER prod ADD INDEX IF NOT EXISTS raw_cased_numbers translate(replaceRegexpAll(replaceRegexpAll(arrayStringConcat(extractAll(raw, '[^0-9]*[^0-9A-Za-z][0-9]{1,2}|[^0-9]+'), '\x01'), '([0-9])', '9\\1'), '([" !#%&\'()*+,\\-./:;=?@\\[\\]_{|}])', '0\\11'), '" !#%&\'()*+,-./:;=?@[]_{|}', 'abcdefghijklmnopqrstuvwxyz') TYPE text(tokenizer = 'splitByNonAlpha');

-- 0023
ALTER TABLE limelight.events_local ON CLUSTER prod MATERIALIZE INDEX raw_cased_numbers;

-- 0024
-- The numbers index (DDL 0016) with three digits after a stretch instead of two, so a
-- needle with a three-digit number after punctuation or a space ("status":500,
-- "with 503", "HTTP 404", "code=429") is answered from the dictionary instead of
-- reading `raw` wherever its first two digits occur: over 1M events of API logs
-- merged, on the engine, x the COUNT by service, "status":500 (10% of events) 12.1
-- before, 2.05 now, "with 503" 9.1 and 1.57. The dictionary holds 183,213 tokens
-- where two digits held 132,890, so needles the old index answered scan more of it
-- ("order 12" 1.16 and 1.37, "status":50 2.78 and 3.83): README, "Search".
-- A new name, for tokens the old index's parts do not hold: parts written before
-- this file are indexed by the mutation below, in the background, and until then
-- they are read, with the same answers. The old index is dropped first (each merge
-- then builds one numbers index; a drop that fails queues nothing). Neither statement
-- waits for its mutation: the embedded engine's sessions wait by default
-- (`mutations_sync`, `alter_sync`), and over 1M events the drop held the start 1.4 s
-- and the new index 2-3 s more (a DROP INDEX also waits for the mutations in
-- progress: after the new index's, it waited for it).
ALTER TABLE limelight.events_local ON CLUSTER prod DROP INDEX IF EXISTS raw_numbers SETTINGS mutations_sync = 0, alter_sync = 0;

-- 0024
ALTER TABLE limelight.events_local ON CLUSTER prod ADD INDEX IF NOT EXISTS raw_numbers_three translate(arrayStringConcat(extractAll(lower(raw), '[^0-9]*[^0-9a-z][0-9]{1,3}|[^0-9]+'), '\x01'), '" !#%&\'()*+,-./:;=?@[]_{|}', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ') TYPE text(tokenizer = 'splitByNonAlpha');

-- 0024
ALTER TABLE limelight.events_local ON CLUSTER prod MATERIALIZE INDEX raw_numbers_three SETTINGS mutations_sync = 0;

-- 0025
-- The cased numbers index (DDL 0023) with three digits after a stretch instead of
-- two, as the numbers index has had since 0024: a matchCase needle with a three-digit
-- number after punctuation or a space ("Status":500, "HTTP 503", "code=429") is
-- answered from the dictionary instead of reading `raw` wherever its first two digits
-- occur (README, "Search", has the figures on both sides).
-- A new name, for tokens the old index's parts do not hold: parts written before this
-- file are indexed by the mutation below, in the background, and read until then with
-- the same answers. The old index is dropped first and neither statement waits for its
-- mutation, for the reasons 0024 gives.
ALTER TABLE limelight.events_local ON CLUSTER prod DROP INDEX IF EXISTS raw_cased_numbers SETTINGS mutations_sync = 0, alter_sync = 0;

-- 0025
ALTER TABLE limelight.events_local ON CLUSTER prod ADD INDEX IF NOT EXISTS raw_cased_numbers_three translate(replaceRegexpAll(replaceRegexpAll(arrayStringConcat(extractAll(raw, '[^0-9]*[^0-9A-Za-z][0-9]{1,3}|[^0-9]+'), '\x01'), '([0-9])', '9\\1'), '([" !#%&\'()*+,\\-./:;=?@\\[\\]_{|}])', '0\\11'), '" !#%&\'()*+,-./:;=?@[]_{|}', 'abcdefghijklmnopqrstuvwxyz') TYPE text(tokenizer = 'splitByNonAlpha');

-- 0025
ALTER TABLE limelight.events_local ON CLUSTER prod MATERIALIZE INDEX raw_cased_numbers_three SETTINGS mutations_sync = 0;

-- 0026
-- Needles of digits ("503", "8080", an order number) occur anywhere in a number: after
-- letters, inside a longer one. None of the indexes before keeps the digits after a
-- letter or past the first three of a number, so such a needle read `raw` in every
-- block that holds a number. This one holds, for each event, every run of three
-- consecutive digits of its text: the runs of three digits or more, cut into their
-- 3-grams. An event holds a needle of three digits exactly when that gram is among its
-- tokens (answered from the index alone), and a longer run of digits only when all of
-- its grams are (which narrows where `raw` is read). README, "Search", has the figures
-- and what it costs at insert.
-- Built over older parts in the background, as 0024 does, and read until then with the
-- same answers: the statements name the tokenizer, so the function is the index's.
ALTER TABLE limelight.events_local ON CLUSTER prod ADD INDEX IF NOT EXISTS raw_digit_runs extractAll(raw, '[0-9]{3,}') TYPE text(tokenizer = ngrams(3));

-- 0026
ALTER TABLE limelight.events_local ON CLUSTER prod MATERIALIZE INDEX raw_digit_runs SETTINGS mutations_sync = 0;

-- 0027
-- The numbers indexes (DDL 0024, 0025) cut again before each `,"`, where a JSON key
-- starts. Their tokens ran from the last digit before them, so one field's key and value
-- were in as many tokens as there are texts between that digit and the key: in API logs,
-- `"status":50` (30% of events) was in thousands of distinct tokens, whose postings
-- were all read (3.73x a COUNT by service over 1M events on the engine; 2.3-3.7x over
-- 10M through the API). Now a field's key starts a token (`,"status":503`): 1.17x. A
-- needle with `,"` inside or a `,` at its end spans a cut, and is narrowed by its
-- pieces and read from `raw` (query/needle.py). README, "Search", has the figures.
-- Built over older parts in the background as 0024's were, and read until then with the
-- same answers; the indexes they replace are dropped first. A server upgraded from before
-- 0025 may still be building them (0024's and 0025's MATERIALIZE do not wait), and the
-- engine refuses to drop an index a running mutation builds ("Cannot drop index ...
-- affected by mutation"; a start over 2M events failed so): those builds, of indexes
-- about to go, are stopped first.
KILL MUTATION ON CLUSTER prod WHERE database = 'limelight' AND table = 'events_local' AND (command LIKE '%MATERIALIZE INDEX raw_numbers_three%' OR command LIKE '%MATERIALIZE INDEX raw_cased_numbers_three%') SYNC;

-- 0027
ALTER TABLE limelight.events_local ON CLUSTER prod DROP INDEX IF EXISTS raw_numbers_three SETTINGS mutations_sync = 0, alter_sync = 0;

-- 0027
ALTER TABLE limelight.events_local ON CLUSTER prod DROP INDEX IF EXISTS raw_cased_numbers_three SETTINGS mutations_sync = 0, alter_sync = 0;

-- 0027
ALTER TABLE limelight.events_local ON CLUSTER prod ADD INDEX IF NOT EXISTS raw_numbers_keys translate(arrayStringConcat(extractAll(replaceAll(lower(raw), ',"', '\x02,"'), '[^0-9]*[^0-9a-z][0-9]{1,3}|[^0-9]+'), '\x01'), '" !#%&\'()*+,-./:;=?@[]_{|}', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ') TYPE text(tokenizer = 'splitByNonAlpha');

-- 0027
ALTER TABLE limelight.events_local ON CLUSTER prod ADD INDEX IF NOT EXISTS raw_cased_numbers_keys translate(replaceRegexpAll(replaceRegexpAll(arrayStringConcat(extractAll(replaceAll(raw, ',"', '\x02,"'), '[^0-9]*[^0-9A-Za-z][0-9]{1,3}|[^0-9]+'), '\x01'), '([0-9])', '9\\1'), '([" !#%&\'()*+,\\-./:;=?@\\[\\]_{|}])', '0\\11'), '" !#%&\'()*+,-./:;=?@[]_{|}', 'abcdefghijklmnopqrstuvwxyz') TYPE text(tokenizer = 'splitByNonAlpha');

-- 0027
ALTER TABLE limelight.events_local ON CLUSTER prod MATERIALIZE INDEX raw_numbers_keys SETTINGS mutations_sync = 0;

-- 0027
ALTER TABLE limelight.events_local ON CLUSTER prod MATERIALIZE INDEX raw_cased_numbers_keys SETTINGS mutations_sync = 0;
