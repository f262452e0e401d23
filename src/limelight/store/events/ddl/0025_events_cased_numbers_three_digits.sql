-- The cased numbers index (DDL 0023) with three digits after a stretch instead of
-- two, as the numbers index has had since 0024: a matchCase needle with a three-digit
-- number after punctuation or a space ("Status":500, "HTTP 503", "code=429") is
-- answered from the dictionary instead of reading `raw` wherever its first two digits
-- occur (README, "Search", has the figures on both sides).
-- A new name, for tokens the old index's parts do not hold: parts written before this
-- file are indexed by the mutation below, in the background, and read until then with
-- the same answers. The old index is dropped first and neither statement waits for its
-- mutation, for the reasons 0024 gives.
ALTER TABLE {db}.events{local}{on_cluster} DROP INDEX IF EXISTS raw_cased_numbers SETTINGS mutations_sync = 0, alter_sync = 0
;
ALTER TABLE {db}.events{local}{on_cluster} ADD INDEX IF NOT EXISTS raw_cased_numbers_three translate(replaceRegexpAll(replaceRegexpAll(arrayStringConcat(extractAll(raw, '[^0-9]*[^0-9A-Za-z][0-9]{1,3}|[^0-9]+'), '\x01'), '([0-9])', '9\\1'), '([" !#%&\'()*+,\\-./:;=?@\\[\\]_{|}])', '0\\11'), '" !#%&\'()*+,-./:;=?@[]_{|}', 'abcdefghijklmnopqrstuvwxyz') TYPE text(tokenizer = 'splitByNonAlpha')
;
ALTER TABLE {db}.events{local}{on_cluster} MATERIALIZE INDEX raw_cased_numbers_three SETTINGS mutations_sync = 0
