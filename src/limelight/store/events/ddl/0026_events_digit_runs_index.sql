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
ALTER TABLE {db}.events{local}{on_cluster} ADD INDEX IF NOT EXISTS raw_digit_runs extractAll(raw, '[0-9]{3,}') TYPE text(tokenizer = ngrams(3))
;
ALTER TABLE {db}.events{local}{on_cluster} MATERIALIZE INDEX raw_digit_runs SETTINGS mutations_sync = 0
