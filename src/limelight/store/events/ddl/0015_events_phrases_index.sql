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
ALTER TABLE {db}.events{local}{on_cluster} ADD INDEX IF NOT EXISTS raw_phrases translate(lower(raw), '0123456789 !#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~', '""""""""""123456789ABCDEFGHIJKLMNOPQRSTUVW') TYPE text(tokenizer = 'splitByNonAlpha')
;
ALTER TABLE {db}.events{local}{on_cluster} MATERIALIZE INDEX raw_phrases
