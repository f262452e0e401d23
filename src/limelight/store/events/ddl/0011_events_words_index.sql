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
ALTER TABLE {db}.events{local}{on_cluster} ADD INDEX IF NOT EXISTS raw_words translate(lower(raw), '0123456789', '          ') TYPE text(tokenizer = 'splitByNonAlpha')
;
ALTER TABLE {db}.events{local}{on_cluster} MATERIALIZE INDEX raw_words
