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
ALTER TABLE {db}.events{local}{on_cluster} ADD INDEX IF NOT EXISTS raw_numbers translate(arrayStringConcat(extractAll(lower(raw), '[^0-9]*[^0-9a-z][0-9]{1,2}|[^0-9]+'), '\x01'), '" !#%&\'()*+,-./:;=?@[]_{|}', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ') TYPE text(tokenizer = 'splitByNonAlpha')
;
ALTER TABLE {db}.events{local}{on_cluster} MATERIALIZE INDEX raw_numbers
