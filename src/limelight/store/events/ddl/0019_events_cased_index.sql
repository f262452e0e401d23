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
ALTER TABLE {db}.events{local}{on_cluster} ADD INDEX IF NOT EXISTS raw_cased translate(raw, '0123456789 ._-/:,=()', '""""""""""0123456789') TYPE text(tokenizer = 'splitByNonAlpha')
;
ALTER TABLE {db}.events{local}{on_cluster} MATERIALIZE INDEX raw_cased
