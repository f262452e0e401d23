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
KILL MUTATION{on_cluster} WHERE database = '{db}' AND table = 'events{local}' AND (command LIKE '%MATERIALIZE INDEX raw_numbers_three%' OR command LIKE '%MATERIALIZE INDEX raw_cased_numbers_three%') SYNC
;
ALTER TABLE {db}.events{local}{on_cluster} DROP INDEX IF EXISTS raw_numbers_three SETTINGS mutations_sync = 0, alter_sync = 0
;
ALTER TABLE {db}.events{local}{on_cluster} DROP INDEX IF EXISTS raw_cased_numbers_three SETTINGS mutations_sync = 0, alter_sync = 0
;
ALTER TABLE {db}.events{local}{on_cluster} ADD INDEX IF NOT EXISTS raw_numbers_keys translate(arrayStringConcat(extractAll(replaceAll(lower(raw), ',"', '\x02,"'), '[^0-9]*[^0-9a-z][0-9]{1,3}|[^0-9]+'), '\x01'), '" !#%&\'()*+,-./:;=?@[]_{|}', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ') TYPE text(tokenizer = 'splitByNonAlpha')
;
ALTER TABLE {db}.events{local}{on_cluster} ADD INDEX IF NOT EXISTS raw_cased_numbers_keys translate(replaceRegexpAll(replaceRegexpAll(arrayStringConcat(extractAll(replaceAll(raw, ',"', '\x02,"'), '[^0-9]*[^0-9A-Za-z][0-9]{1,3}|[^0-9]+'), '\x01'), '([0-9])', '9\\1'), '([" !#%&\'()*+,\\-./:;=?@\\[\\]_{|}])', '0\\11'), '" !#%&\'()*+,-./:;=?@[]_{|}', 'abcdefghijklmnopqrstuvwxyz') TYPE text(tokenizer = 'splitByNonAlpha')
;
ALTER TABLE {db}.events{local}{on_cluster} MATERIALIZE INDEX raw_numbers_keys SETTINGS mutations_sync = 0
;
ALTER TABLE {db}.events{local}{on_cluster} MATERIALIZE INDEX raw_cased_numbers_keys SETTINGS mutations_sync = 0
