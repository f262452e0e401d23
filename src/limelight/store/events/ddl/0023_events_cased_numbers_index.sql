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
ALTER TABLE {db}.events{local}{on_cluster} ADD INDEX IF NOT EXISTS raw_cased_numbers translate(replaceRegexpAll(replaceRegexpAll(arrayStringConcat(extractAll(raw, '[^0-9]*[^0-9A-Za-z][0-9]{1,2}|[^0-9]+'), '\x01'), '([0-9])', '9\\1'), '([" !#%&\'()*+,\\-./:;=?@\\[\\]_{|}])', '0\\11'), '" !#%&\'()*+,-./:;=?@[]_{|}', 'abcdefghijklmnopqrstuvwxyz') TYPE text(tokenizer = 'splitByNonAlpha')
;
ALTER TABLE {db}.events{local}{on_cluster} MATERIALIZE INDEX raw_cased_numbers
