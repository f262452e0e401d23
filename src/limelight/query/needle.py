"""The needle: free text over an event's stored JSON (``raw``), compiled to what the
events' text indexes answer, with the answers of reading every event.

Three text indexes over ``lower(raw)`` (ClickHouse folds ASCII letters only, as
``positionCaseInsensitive`` does) answer a needle from their dictionaries alone:

- WORDS (DDL 0011): digits made spaces, split at anything but a letter or digit. A
  needle of letters lies inside one of its tokens wherever it occurs.
- PHRASES (DDL 0015): digits and ``"`` split the text, and every other printable
  ASCII character that is not a letter is spelled as a digit or a capital (which
  the lowered text no longer holds), so the tokenizer keeps it inside a token. A
  token is then a stretch of the text between two digits or quotes: a message's
  words with their spaces and punctuation (``payment failed: card_declined by
  issuer (order ``), a path, a dotted key. The spelling is one to one, so a needle
  with no digit, quote or control character occurs in ``raw`` (ASCII case folded)
  exactly where its spelling occurs in this text, always inside one token: a
  ``LIKE`` on it is answered by scanning the index's dictionary, never ``raw``
  (for a needle of ASCII: the engine scans the dictionary for nothing else).
  Ids and numbers fall apart at their digits, so the dictionary stays as small as
  WORDS' (60,496 tokens for 1M events of API logs, against 3.1M when digits stay).

- NUMBERS (DDL 0027, which replaced 0024's index, itself 0016's with three digits): quotes
  kept, and the digits that follow a stretch kept with it, three at most: the text is
  cut before each `,"` (where a JSON key starts), then into the matches of
  ``[^0-9]*[^0-9a-z][0-9]{1,3}`` (a stretch that ends in a character that is not a
  letter, with the first one to three digits after it) or ``[^0-9]+`` (any other
  stretch), the rest of each number dropped, and 26 of the 33 printable characters
  that are not letters or digits spelled as capitals (``$<>\\^`~`` stay separators).
  A needle of those characters that does not start with a digit, ends in at most
  three digits after a character that is not a letter, holds `,"` only at its start
  and does not end in `,` (``order 12``, ``ERR-42``, ``"status":500``,
  ``"level":"error``) occurs in ``raw`` exactly where its spelling occurs in this
  text, inside one token: answered from the dictionary. The cut before a key keeps a
  field in few tokens (``,"status":503``), where they ran from the digit before and
  were as many as the texts between (``"status":50`` in thousands). Numbers are cut
  to their first three digits (an HTTP status, a three-digit code), and a stretch
  ending in a letter (hex ids: ``af91``) keeps none, so the dictionary stays bounded:
  83,428 tokens for 1M events of API logs (183,213 before the cut at keys, 132,890
  with two digits), where keeping the digits after letters too held 438,863 with two.

- CASED (DDL 0019): ``raw`` as written, letters in their case; digits and ``"``
  split it, and ten characters (`` ._-/:,=()``) are spelled as the digits, which the
  text no longer holds, so a token is a stretch between two digits or quotes up to
  any other punctuation, as PHRASES' is, but cased. A ``matchCase`` needle of ASCII
  letters and those ten characters occurs in ``raw`` exactly where its spelling occurs
  in this text, inside one token: answered from the dictionary (``LIKE`` scans it
  case-sensitively). Only the ten digits are free to spell with (the letters are the
  text's own), so the rest of the punctuation cuts its tokens.

- CASED_NUMBERS (DDL 0027, which replaced 0025's index, itself 0023's with three
  digits): NUMBERS' cut of ``raw`` (three digits, and before each `,"`) but as written
  (letters in their case), where no character is free to spell with (letters are the
  text's, digits are kept).
  So each of NUMBERS' 26 characters becomes three, ``0``, a lowercase letter and ``1``,
  and each kept digit two, ``9`` and the digit. A needle's spelling meets the text only
  where the needle meets ``raw``: a code's letter sits between its ``0`` and ``1``,
  where a needle's letter never is (a needle's letter is followed by a letter or a
  code's ``0``); a kept digit comes after its ``9`` and is followed by another kept
  digit or the piece's end, never by a code or a letter, so a needle's code cannot
  start on it, nor a needle's kept digit on a code's ``0``. A ``matchCase`` needle
  that NUMBERS would answer without case (``code ERR-42``, ``"level":"Error``,
  ``HTTP 503``) occurs in ``raw`` exactly where its spelling occurs here, inside one
  token: answered from the dictionary.

- DIGIT_RUNS (DDL 0026): each run of three digits or more of ``raw``, tokenized into
  its 3-grams. A needle's run of digits lies inside one run of ``raw``'s wherever it
  occurs, so its 3-grams are tokens of every event holding the needle; three digits
  alone (``503``, also inside ``1503`` or ``af503``) occur exactly where their gram is
  a token: answered from the index's postings.

A regex that is a few needles (``query.regex_texts``: ``ERR-[0-9]+`` finds what one of
``ERR-0`` to ``ERR-9`` finds) is those needles, when an index answers each: their
conditions joined by OR, three digits by one lookup of their grams.

A regex each of whose matches lies inside one token of PHRASES (CASED with
``matchCase``) is answered from that index too: the tokens of its dictionary that the
regex finds (spelled back) are looked up (``_regex_from_dictionary``).

Anything else (a needle starting with digits, longer numbers, other scripts, one
character, ``matchCase`` with other punctuation, another regex) is tested on ``raw``;
what of it the indexes can answer (its stretches between digits, each with the first
three digits after it where NUMBERS holds them; the 3-grams of its numbers; a
``matchCase`` needle's stretches in CASED; a regex's literal text) is asked of them
first, so the engine reads ``raw`` only in the granules where those occur, and the
ngram index (DDL 0003) rules out granules too.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from string import ascii_letters, ascii_lowercase

from limelight.query.regex_texts import regex_texts
from limelight.query.scope import Condition, Scope
from limelight.query.spec import Needle
from limelight.query.sql import Params
from limelight.times import Timeframe

_DIGITS = "0123456789"
# Printable ASCII that is neither a letter, a digit nor ``"``, and how PHRASES spells it.
_SEPARATORS = " !#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
_SPELLINGS = "123456789ABCDEFGHIJKLMNOPQRSTUVW"
assert len(_SEPARATORS) == len(_SPELLINGS) == 32


def _sql_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


# The expressions of the indexes, exactly as their DDL states them (a test compares).
WORDS = "translate(lower(raw), '0123456789', '          ')"
_QUOTES = '"' * len(_DIGITS)
PHRASES = (
    f"translate(lower(raw), {_sql_string(_DIGITS + _SEPARATORS)},"
    f" {_sql_string(_QUOTES + _SPELLINGS)})"
)

# CASED: what it spells as the digits (the commonest punctuation of what people search
# for with its case: messages, dotted and snake_case names, paths, key=value).
_CASED_SPELLED = " ._-/:,=()"
assert len(_CASED_SPELLED) == len(_DIGITS)
CASED = f"translate(raw, {_sql_string(_DIGITS + _CASED_SPELLED)}, {_sql_string(_QUOTES + _DIGITS)})"
_SPELL_CASED = str.maketrans(_CASED_SPELLED, _DIGITS)
# What CASED does not keep inside a token.
_NOT_IN_CASED = re.compile(f"[^A-Za-z{re.escape(_CASED_SPELLED)}]+")

# NUMBERS: what it spells (a quote and 25 of PHRASES' separators) and as what; the
# other seven separate its tokens, as the byte between the extracted pieces does.
_NUMBERS_SPELLED = "\" !#%&'()*+,-./:;=?@[]_{|}"
_CAPITALS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
assert len(_NUMBERS_SPELLED) == len(_CAPITALS)
# The digits both numbers indexes keep after a stretch.
NUMBERS_DIGITS = 3
# Where NUMBERS and CASED_NUMBERS also cut their text (DDL 0027): before each `,"`,
# where a JSON key starts.
_KEY_START = ',"'
NUMBERS = (
    f"translate(arrayStringConcat(extractAll(replaceAll(lower(raw), '{_KEY_START}',"
    f" '\\x02{_KEY_START}'), '[^0-9]*[^0-9a-z][0-9]{{1,{NUMBERS_DIGITS}}}|[^0-9]+'), '\\x01'),"
    f" {_sql_string(_NUMBERS_SPELLED)}, {_sql_string(_CAPITALS)})"
)
_AT_KEY_STARTS = re.compile(f"(?={_KEY_START})")
_SPELL_NUMBERS = str.maketrans(_NUMBERS_SPELLED, _CAPITALS)
# What NUMBERS keeps inside a token, apart from digits.
_NOT_IN_NUMBERS = re.compile(f"[^a-z{re.escape(_NUMBERS_SPELLED)}]+")
# A stretch between digits (or the needle's ends), and the digits after it.
_STRETCH_AND_DIGITS = re.compile("([^0-9]+)([0-9]*)")

# CASED_NUMBERS: NUMBERS' cut of raw as written; its kept digits spelled
# ``9`` and the digit (first, while they are the text's only digits), then each of
# NUMBERS' characters as ``0``, a lowercase letter and ``1``.
_CASED_NUMBERS_CLASS = "".join("\\" + c if c in "[]-" else c for c in _NUMBERS_SPELLED)
CASED_NUMBERS = (
    "translate(replaceRegexpAll(replaceRegexpAll(arrayStringConcat(extractAll("
    f"replaceAll(raw, '{_KEY_START}', '\\x02{_KEY_START}'),"
    f" '[^0-9]*[^0-9A-Za-z][0-9]{{1,{NUMBERS_DIGITS}}}|[^0-9]+'), '\\x01'),"
    " '([0-9])', '9\\\\1'),"
    f" {_sql_string('([' + _CASED_NUMBERS_CLASS + '])')}, '0\\\\11'),"
    f" {_sql_string(_NUMBERS_SPELLED)}, {_sql_string(ascii_lowercase[: len(_NUMBERS_SPELLED)])})"
)
_SPELL_CASED_NUMBERS = str.maketrans(
    {c: f"0{letter}1" for c, letter in zip(_NUMBERS_SPELLED, ascii_lowercase, strict=True)}
    | {d: f"9{d}" for d in _DIGITS}
)
# What CASED_NUMBERS keeps inside a token, apart from digits.
_NOT_IN_CASED_NUMBERS = re.compile(f"[^A-Za-z{re.escape(_NUMBERS_SPELLED)}]+")

# DIGIT_RUNS (DDL 0026): each run of three digits or more, tokenized into its 3-grams.
# A needle's digits occur in raw only inside one run of it, so every 3-gram of a run of
# three digits or more in a needle is a token of each event that holds the needle, and
# a needle of three digits alone is in an event exactly when its gram is. The statement
# names the tokenizer: where the index is not built yet the function tokenizes as the
# index does (with none named it splits at non-letters, and "503" inside "1503" is lost).
DIGIT_RUNS = "extractAll(raw, '[0-9]{3,}')"
_DIGIT_RUNS = re.compile("[0-9]{3,}")
_THREE_DIGITS = re.compile("[0-9]{3}")

_ASCII_LOWER = str.maketrans({chr(c): chr(c + 32) for c in range(ord("A"), ord("Z") + 1)})
_SPELL = str.maketrans(_SEPARATORS, _SPELLINGS)
# A needle of two or more ASCII letters is looked up in WORDS.
_LETTERS = re.compile(r"[A-Za-z]{2,}")
# What PHRASES cannot answer from its dictionary: what ends its tokens (digits, quotes,
# the control characters translate leaves) and bytes past ASCII, which the engine
# does not look up in the dictionary (a needle of them was read from every event).
_UNANSWERED = re.compile(r'[0-9"\x00-\x1f\x7f-\U0010ffff]+')
# The shortest stretch worth a dictionary scan when it only narrows what `raw` is read for.
_MIN_STRETCH = 3


@dataclass(frozen=True)
class Dictionaries:
    """What a regex needle may read besides the rows it tests: the text indexes'
    dictionaries of ``table`` (one server's MergeTree table; none where the settings
    keep them unread, and on a cluster, whose shards each hold their own) and the
    tenant's rows in ``timeframe``."""

    scope: Scope
    table: str
    timeframe: Timeframe


def needle_sql(needle: Needle, params: Params, dictionaries: Dictionaries | None = None) -> str:
    if needle.isRegex:
        return _regex_sql(needle, params, dictionaries)
    folded = needle.value.translate(_ASCII_LOWER)
    answered = _answering_index(needle.value, needle.matchCase)
    if answered is not None:
        return _answered(answered, needle.value, needle.matchCase, params)
    cased = _cased_stretches(needle.value) if needle.matchCase else []
    narrowed = [*(_cased_like(s, params) for s in cased), *_narrowing([folded], params, cased)]
    func = "position" if needle.matchCase else "positionCaseInsensitive"
    found = f"{func}(raw, {params.add(needle.value, 'String')}) > 0"
    # Implied by `found` (both fold ASCII letters only), so it never changes the
    # answer: it is there for the ngram skip index on lower(raw) (DDL 0003),
    # which rules out the granules that cannot hold the needle.
    ngrams = f"lower(raw) LIKE {params.add('%' + _like_escape(folded) + '%', 'String')}"
    return _all([*narrowed, found, ngrams])


def _answering_index(value: str, match_case: bool) -> str | None:
    """Which index answers the needle ``value`` exactly from its dictionary or postings
    (the module's docstring says why each does), if one does."""
    folded = value.translate(_ASCII_LOWER)
    if _THREE_DIGITS.fullmatch(value):
        return "grams"  # with or without matchCase: digits have no case
    if not match_case and _LETTERS.fullmatch(value):
        # Letters occur in raw (ASCII case folded) exactly where they occur in WORDS,
        # whose digits only became spaces, always inside one token of it.
        return "words"
    if not match_case and len(folded) >= 2 and not _UNANSWERED.search(folded):
        return "phrases"  # the spelling holds no LIKE wildcard
    if not match_case and len(folded) >= 2 and _numbers_exact(folded):
        return "numbers"  # the index that keeps quotes and digits
    if match_case and len(value) >= 2 and not _NOT_IN_CASED.search(value):
        return "cased"  # its dictionary scanned by a LIKE that keeps case
    if match_case and len(value) >= 2 and _numbers_exact(value, cased=True):
        return "cased numbers"  # NUMBERS' needles, with their case
    return None


def _answered(index: str, value: str, match_case: bool, params: Params) -> str:
    """The condition that index answers the needle ``value`` with."""
    folded = value.translate(_ASCII_LOWER)
    if index == "grams":
        return _digit_grams([value], params)
    if index == "words":
        return f"{WORDS} LIKE {params.add('%' + folded + '%', 'String')}"
    if index == "phrases":
        return f"{PHRASES} LIKE {params.add('%' + folded.translate(_SPELL) + '%', 'String')}"
    if index == "numbers":
        return _numbers_like(folded, params)
    if index == "cased":
        return _cased_like(value, params)
    spelled = value.translate(_SPELL_CASED_NUMBERS)
    return f"{CASED_NUMBERS} LIKE {params.add('%' + spelled + '%', 'String')}"


def _regex_sql(needle: Needle, params: Params, dictionaries: Dictionaries | None) -> str:
    answered = _regex_as_needles(needle)
    if answered is not None:
        return _any_needle(answered, needle.matchCase, params)
    runs = regex_literals(needle.value)
    regex = needle.value if needle.matchCase else "(?i)" + needle.value
    index = _CASED_INDEX if needle.matchCase else _PHRASES_INDEX
    if (
        dictionaries is not None
        and _literal_enough(needle.value)
        and regex_within_tokens(needle.value, index.outside)
    ):
        return _regex_from_dictionary(index, params.add(regex, "String"), params, dictionaries)
    narrowed = _narrowing([_case_safe(run) for run in runs], params)
    return _all([*narrowed, f"match(raw, {params.add(regex, 'String')})"])


# The most needles a regex is asked as, each a scan of an index's dictionary: over 1M
# events of API logs each added about 0.2x a COUNT by service (`order 4[0-9]+`, ten:
# 1.9x; `ERR-[0-9]{2}`, a hundred: 12x), where reading raw was 7-15x.
MAX_REGEX_SCANS = 20


def _regex_as_needles(needle: Needle) -> list[tuple[str, str]] | None:
    """The needles a regex finds exactly what one of finds (``query.regex_texts``), each
    with the index that answers it, when one answers each; without ``matchCase``, ASCII
    text without ``k`` or ``s``, which RE2 also finds as the Kelvin sign and the long s,
    and needles not."""
    texts = regex_texts(needle.value)
    if texts is None:
        return None
    if not needle.matchCase:
        if any(_FOLDS_BEYOND_ASCII.search(t.translate(_ASCII_LOWER)) for t in texts):
            return None
        texts = list(dict.fromkeys(t.translate(_ASCII_LOWER) for t in texts))
    answered = []
    for text in texts:
        index = _answering_index(text, needle.matchCase)
        if index is None:
            return None
        answered.append((text, index))
    if sum(1 for _, index in answered if index != "grams") > MAX_REGEX_SCANS:
        return None
    return answered


def _any_needle(answered: list[tuple[str, str]], match_case: bool, params: Params) -> str:
    """Events holding one of the needles, each answered by its index: three digits in one
    lookup of their grams, the others each a scan of a dictionary, joined by OR (the
    run's settings keep the engine from making one ``multiSearchAny`` of them, which it
    tests on every event)."""
    grams = [text for text, index in answered if index == "grams"]
    conditions = [
        _answered(index, text, match_case, params) for text, index in answered if index != "grams"
    ]
    if grams:
        conditions.append(
            f"hasAnyTokens({DIGIT_RUNS}, {params.add(grams, 'Array(String)')}, 'ngrams')"
        )
    return conditions[0] if len(conditions) == 1 else "(" + " OR ".join(conditions) + ")"


def _numbers_exact(text: str, cased: bool = False) -> bool:
    """Whether NUMBERS answers ``text`` (ASCII lowercase) exactly, or CASED_NUMBERS
    ``text`` as written (``cased``): characters it keeps in a token, no digit but at
    most the index's kept digits at the end, after a character not a letter; no `,"`
    but at the start, and no `,` at the end (where ``raw`` may go on with `"`), since
    both cut their tokens before each `,"`."""
    stretch = text.rstrip(_DIGITS)
    digits = len(text) - len(stretch)
    outside = _NOT_IN_CASED_NUMBERS if cased else _NOT_IN_NUMBERS
    return (
        bool(stretch)
        and not outside.search(stretch)
        and (digits == 0 or (digits <= NUMBERS_DIGITS and stretch[-1] not in ascii_letters))
        and _KEY_START not in text[1:]
        and not text.endswith(_KEY_START[0])
    )


def _numbers_like(text: str, params: Params) -> str:
    return f"{NUMBERS} LIKE {params.add('%' + text.translate(_SPELL_NUMBERS) + '%', 'String')}"


def _cased_like(text: str, params: Params) -> str:
    return f"{CASED} LIKE {params.add('%' + text.translate(_SPELL_CASED) + '%', 'String')}"


def _cased_stretches(text: str) -> list[str]:
    """The stretches of ``text`` (as written) that lie inside one CASED token wherever
    ``text`` occurs, long enough to be worth a dictionary scan."""
    return list(dict.fromkeys(s for s in _NOT_IN_CASED.split(text) if len(s) >= _MIN_STRETCH))


def _numbers_pieces(text: str) -> list[str]:
    """The pieces of ``text`` (ASCII lowercase) that lie inside one NUMBERS token
    wherever ``text`` occurs: each stretch between digits cut at what NUMBERS does not
    keep, the last piece before digits with the first three of them when it ends in a
    character that is not a letter; each cut again before a `,"`, and the text's end
    without a `,` there (``raw`` may go on with `"`, where the index cuts)."""
    pieces = []
    for stretch, digits in _STRETCH_AND_DIGITS.findall(text):
        *inner, last = _NOT_IN_NUMBERS.split(stretch)
        if digits and last and last[-1] not in ascii_lowercase:
            last += digits[:NUMBERS_DIGITS]
        pieces += [*inner, last]
    if pieces and not text[-1:].isdigit():
        pieces[-1] = pieces[-1].removesuffix(_KEY_START[0])
    return [cut for piece in pieces for cut in _AT_KEY_STARTS.split(piece)]


def _narrowing(texts: list[str], params: Params, cased: Sequence[str] = ()) -> list[str]:
    """What the indexes answer of the text a needle requires (each of ``texts``, ASCII
    lowercase, occurs in every event the needle finds): NUMBERS' pieces of it, and the
    stretches between its digits and quotes that PHRASES holds where NUMBERS holds
    them only cut (at ``$<>\\^`~``); none that lies inside one of ``cased`` (stretches
    asked of CASED, which require their lowercase text too)."""
    implied = [c.translate(_ASCII_LOWER) for c in cased]
    pieces = [
        p
        for t in texts
        for p in _numbers_pieces(t)
        if len(p) >= _MIN_STRETCH and not any(p in c for c in implied)
    ]
    stretches = [
        s
        for t in texts
        for s in _UNANSWERED.split(t)
        if len(s) >= _MIN_STRETCH
        and not _UNANSWERED.search(s)
        and not any(s in p for p in pieces)
        and not any(s in c for c in implied)
    ]
    grams = [
        run[i : i + 3] for t in texts for run in _DIGIT_RUNS.findall(t) for i in range(len(run) - 2)
    ]
    return [
        *(_numbers_like(p, params) for p in dict.fromkeys(pieces)),
        *(
            f"{PHRASES} LIKE {params.add('%' + s.translate(_SPELL) + '%', 'String')}"
            for s in dict.fromkeys(stretches)
        ),
        *([_digit_grams(list(dict.fromkeys(grams)), params)] if grams else []),
    ]


def _digit_grams(grams: list[str], params: Params) -> str:
    return f"hasAllTokens({DIGIT_RUNS}, {params.add(grams, 'Array(String)')}, 'ngrams')"


def _all(conditions: list[str]) -> str:
    return "(" + " AND ".join(conditions) + ")"


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


# RE2 folds `k` with the Kelvin sign and `s` with the long s when matching without
# case, which lower(raw) does not: a literal is only required up to those letters.
_FOLDS_BEYOND_ASCII = re.compile(r"[ks\x80-\U0010ffff]+")


def _case_safe(run: str) -> str:
    # A NUL is in no index's token, so what _narrowing asks stops at it.
    return _FOLDS_BEYOND_ASCII.sub("\x00", run.translate(_ASCII_LOWER))


# Regexes from the dictionaries. A regex each of whose matches lies inside one token of
# an index finds an event exactly when it finds one of the event's tokens (spelled back:
# the text of raw, lowered for PHRASES), so the events it finds are those holding one of
# the tokens of the dictionary it finds: looked up in the index like a word, without
# reading raw. Over 1M events of API logs `card_dec[a-z]+ed by` (2%) took 30 ms where
# reading raw took 270 (a COUNT by service 31); the dictionary scan is 15-20 ms of it.
# The more tokens a regex finds, the more it costs to look them up: past tens of
# thousands, more than reading raw (`e[a-z]+`, 37,394 tokens: 235 ms against 185;
# `[a-z]+`, 60,487: 508 against 209; `[a-z]+ed`, 7,180: 54 against 252). A regex is
# looked up only when each alternative holds this much literal text, which few tokens
# do. Whether it is never depends on what the dictionary holds: its tokens are every
# tenant's, and a choice made by counting them (a first version read raw past 10,000)
# tells a tenant, by the bytes a run reads, whether another tenant's events hold a token.
MIN_REGEX_LITERAL = 2
# The longest token taken from a dictionary (bytes): a longer one the regex finds is
# found in the tenant's own events long enough to hold it. Every tenant's tokens are in
# the dictionary, and 800 events of one 250 KB word each, which a short regex finds
# by chance, made every regex of the day run out of memory (2 GB) holding them. Many
# shorter ones still do (the engine holds the tokens looked up whole, 13-19 times their
# bytes: 40 MB of 4 KB words, 512-768 MB), and bounding their bytes would tell one
# tenant, by what a run reads, whether another's tokens are there: so this lookup is
# the deployment's choice (``EventStore.text_dictionaries``, off by default).
MAX_DICTIONARY_TOKEN = 4096


@dataclass(frozen=True)
class _TokenIndex:
    name: str  # as the DDL names it
    expr: str
    spelled: str  # what translate(token, spelled, text) gives back the text of
    text: str
    outside: re.Pattern[str]  # a character its tokens never hold


# Digits, quotes and control characters end PHRASES' tokens; CASED's too, and every
# other ASCII character that is not a letter or one of its ten.
_PHRASES_INDEX = _TokenIndex(
    "raw_phrases", PHRASES, _SPELLINGS, _SEPARATORS, re.compile(r'[0-9"\x00-\x1f\x7f]')
)
_CASED_INDEX = _TokenIndex(
    "raw_cased",
    CASED,
    _DIGITS,
    _CASED_SPELLED,
    re.compile(f"[^A-Za-z{re.escape(_CASED_SPELLED)}\x80-\U0010ffff]"),
)


def _regex_from_dictionary(
    index: _TokenIndex, pattern: str, params: Params, dictionaries: Dictionaries
) -> str:
    spelled, text = params.add(index.spelled, "String"), params.add(index.text, "String")

    def found(token: str) -> str:
        return f"match(translate({token}, {spelled}, {text}), {pattern})"

    scope, frame = dictionaries.scope, dictionaries.timeframe
    longest = params.add(MAX_DICTIONARY_TOKEN, "UInt32")
    short = f"length(token) <= {longest} AND {found('token')}"
    dictionary = scope.dictionary(params, dictionaries.table, index.name, short, frame)

    # The tenant's rows whose tokens the dictionary does not give, worked out here: those
    # in the parts it does not hold (written since the last merge; where the statement
    # then looks the tokens up in such a part, it tokenizes each row as the index would
    # have), and those long enough to hold a token longer than it gives.
    def rows(more: str) -> Condition:
        return scope.where(
            params,
            lambda p: [
                f"timestamp >= fromUnixTimestamp64Milli({p.add(frame.from_ms, 'Int64')})",
                f"timestamp < fromUnixTimestamp64Milli({p.add(frame.to_ms, 'Int64')})",
                *([more] if more else []),
                f"match(raw, {pattern})",
            ],
        )

    columns = (
        f"groupUniqArrayArray(arrayFilter(t -> {found('t')}, tokens({index.expr},"
        " 'splitByNonAlpha')))"
    )
    unindexed = scope.select(
        columns, dictionaries.table, rows(f"_part NOT IN (SELECT arrayJoin({dictionary}.1))")
    )
    long = scope.select(columns, dictionaries.table, rows(""), longer_than=longest)
    # One scalar subquery (the engine reads it once, however often the statement names
    # the dictionary in it), whose answer the lookup takes as the constant it requires:
    # an expression over a large one is not folded into a constant (over 1 MB of tokens).
    tokens = f"(SELECT arrayDistinct(arrayConcat({dictionary}.2, ({unindexed}), ({long}))))"
    return f"hasAnyTokens({index.expr}, {tokens}, 'splitByNonAlpha')"


def _literal_enough(pattern: str) -> bool:
    """Whether every match of ``pattern`` holds ``MIN_REGEX_LITERAL`` characters of its
    literal text (each alternative its own: ``timeout|declined``)."""
    branches = _alternatives(pattern)
    return bool(branches) and all(
        max(map(len, regex_literals(branch)), default=0) >= MIN_REGEX_LITERAL for branch in branches
    )


def _alternatives(pattern: str) -> list[str]:
    """The alternatives of ``pattern`` (``|`` outside groups and classes); none where
    it does not read (an unclosed class)."""
    branches, start, depth, i = [], 0, 0, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i = _skip_atom(pattern, i)
            if i < 0:
                return []
            continue
        depth += {"(": 1, ")": -1}.get(c, 0)
        if c == "|" and depth == 0:
            branches.append(pattern[start:i])
            start = i + 1
        i += 1
    return [*branches, pattern[start:]]


def regex_within_tokens(pattern: str, outside: re.Pattern[str]) -> bool:
    """Whether every match of the RE2 ``pattern`` (with or without case) is text of one
    token of an index whose tokens never hold a character ``outside`` matches: no
    character it can match is one of those, it has no anchor (a token's ends are not the
    text's), and it matches no empty text (which every event holds). False too where this
    reading is unsure (escapes of letters, classes of names, flags, `.`)."""
    ranges = _regex_ranges(pattern)
    if ranges is None:
        return False
    for low, high in ranges:
        if any(outside.match(chr(c)) for c in range(ord(low), min(ord(high), 0x7F) + 1)):
            return False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Python's own warnings of what it may read later
            # Where this reading accepts a pattern, Python reads it as RE2 does.
            return re.compile(pattern).fullmatch("") is None
    except re.error:
        return False  # the engine says what is wrong with it


def _regex_ranges(pattern: str) -> list[tuple[str, str]] | None:
    """The characters a match of ``pattern`` can hold, as ranges (a literal ``a`` is
    ``("a", "a")``); None where it holds what this reading does not follow."""
    ranges: list[tuple[str, str]] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            escaped = _escaped(pattern, i)
            if escaped is None:
                return None
            ranges.append((escaped, escaped))
            i += 2
        elif c == "[":
            end = _class_ranges(pattern, i, ranges)
            if end < 0:
                return None
            i = end
        elif c == "(":
            if pattern.startswith("(?", i) and not pattern.startswith("(?:", i):
                return None  # flags, names: not followed
            i += 3 if pattern.startswith("(?:", i) else 1
        elif c == "{":
            repeat = _REPEAT.match(pattern, i)
            if repeat is None:
                return None  # RE2 and Python read a stray brace differently
            i = repeat.end()
        elif c in ".^$":
            return None  # any character; the text's ends
        else:  # a literal, or one of `)|*+?`
            if c not in ")|*+?":
                ranges.append((c, c))
            i += 1
    return ranges


_REPEAT = re.compile(r"\{[0-9]+(,[0-9]*)?\}")


def _escaped(pattern: str, i: int) -> str | None:
    """The character ``\\x`` at ``i`` stands for, when it is ASCII punctuation (an
    escape of a letter or digit is a class, an anchor or a code: not followed)."""
    escaped = pattern[i + 1 : i + 2]
    if not escaped or escaped.isalnum() or not escaped.isascii():
        return None
    return escaped


def _class_ranges(pattern: str, i: int, ranges: list[tuple[str, str]]) -> int:
    """Adds the ranges of the class at ``i`` to ``ranges``; the index after it (-1: a
    negated class, a class of names or an escape this reading does not follow)."""
    j = i + 1
    if pattern[j : j + 1] == "^":
        return -1
    first = True
    while j < len(pattern) and (pattern[j] != "]" or first):
        first = False
        low, j = _class_char(pattern, j)
        high = low
        if pattern[j : j + 1] == "-" and pattern[j + 1 : j + 2] not in ("", "]"):
            high, j = _class_char(pattern, j + 1)
        if low is None or high is None or high < low:
            return -1
        ranges.append((low, high))
    return j + 1 if j < len(pattern) else -1


def _class_char(pattern: str, j: int) -> tuple[str | None, int]:
    """The character of a class at ``j`` and the index after it (None: `[:alpha:]` and
    the like, or an escape this reading does not follow)."""
    if pattern[j] == "\\":
        return _escaped(pattern, j), j + 2
    return (None if pattern[j] == "[" else pattern[j]), j + 1


_META = set("\\.^$*+?()[]{}|")


def regex_literals(pattern: str) -> list[str]:
    """Runs of literal text every match of the RE2 ``pattern`` holds; none when the
    pattern has a top-level alternation or anything this reading is unsure of."""
    runs: list[str] = []
    run = ""
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            escaped = pattern[i + 1 : i + 2]
            if not escaped or escaped.isalnum() or not escaped.isascii():
                return []  # a class, an anchor, a code point: not worth reading further
            run += escaped
            i += 2
        elif c not in _META:
            run += c
            i += 1
        elif c in "*?{":  # the atom before may be absent
            runs.append(run[:-1])
            run = ""
            i = _skip_repeat(pattern, i)
            if i < 0:
                return []
        elif c == "+":  # the atom before occurs, repeated
            runs.append(run)
            run = ""
            i += 2 if pattern[i + 1 : i + 2] == "?" else 1
        elif c == "|":
            return []
        else:  # a group, a class, `.`, `^` or `$`: required text stops here
            runs.append(run)
            run = ""
            i = _skip_atom(pattern, i)
            if i < 0:
                return []
            if pattern[i : i + 1] in ("*", "?", "{", "+"):
                i = _skip_repeat(pattern, i)
                if i < 0:
                    return []
    runs.append(run)
    return [r for r in runs if r]


def _skip_repeat(pattern: str, i: int) -> int:
    """The index after the repetition operator at ``i`` (-1: not one this reads)."""
    if pattern[i] == "{":
        end = pattern.find("}", i)
        if end < 0 or not re.fullmatch(r"\d+(,\d*)?", pattern[i + 1 : end]):
            return -1
        i = end + 1
    else:
        i += 1
    return i + 1 if pattern[i : i + 1] == "?" else i


def _skip_atom(pattern: str, i: int) -> int:
    """The index after the group, class or single metacharacter at ``i`` (-1: unsure)."""
    c = pattern[i]
    if c in ".^$":
        return i + 1
    if c == "[":
        j = i + 1
        if pattern[j : j + 1] == "^":
            j += 1
        if pattern[j : j + 1] == "]":
            j += 1
        while j < len(pattern) and pattern[j] != "]":
            if pattern[j] == "[":
                return -1  # a POSIX class inside: unsure
            j += 2 if pattern[j] == "\\" else 1
        return j + 1 if j < len(pattern) else -1
    if c == "(":
        depth, j = 0, i
        while j < len(pattern):
            if pattern[j] == "\\":
                j += 2
                continue
            if pattern[j] == "[":
                j = _skip_atom(pattern, j)
                if j < 0:
                    return -1
                continue
            depth += {"(": 1, ")": -1}.get(pattern[j], 0)
            j += 1
            if depth == 0:
                return j
        return -1
    return -1  # a stray `)`, `]` or `}`
