"""The needle's compiler: which text a regex requires, which needles the indexes answer
alone, and the indexes' expressions as their DDL states them."""

from __future__ import annotations

from importlib import resources

import pytest

from limelight.query.needle import (
    CASED,
    CASED_NUMBERS,
    DIGIT_RUNS,
    NUMBERS,
    PHRASES,
    WORDS,
    Dictionaries,
    needle_sql,
    regex_literals,
    regex_within_tokens,
)
from limelight.query.scope import Scope
from limelight.query.spec import Needle
from limelight.query.sql import Params
from limelight.times import Timeframe


@pytest.mark.parametrize(
    ("pattern", "literals"),
    [
        ("payment failed", ["payment failed"]),
        (r"issuer \(order \d+\)", []),  # \d: unsure past it, so nothing
        (r"issuer \(order [0-9]+\)", ["issuer (order ", ")"]),
        ("card_dec[a-z]+ed", ["card_dec", "ed"]),
        ("colou?r", ["colo", "r"]),
        ("ab*c", ["a", "c"]),
        ("ab+c", ["ab", "c"]),
        ("ab{2,3}c", ["a", "c"]),
        ("ab+?c", ["ab", "c"]),
        ("a.b", ["a", "b"]),
        ("^start$", ["start"]),
        ("(?i)card_DECLINED", ["card_DECLINED"]),
        ("order (12|34) done", ["order ", " done"]),
        ("(a|b)?x", ["x"]),
        ("x(abc)*y", ["x", "y"]),
        ("timeout|declined", []),
        ("[a|b]c", ["c"]),
        ("[]a]b", ["b"]),
        ("[[:alpha:]]x", []),
        ("/api/{id}", []),
        ("a)b", []),
        ("unclosed (group", []),
        (r"\Qa.b\E", []),
        (r"a\.b", ["a.b"]),
    ],
)
def test_regex_literals_are_the_text_every_match_holds(pattern: str, literals: list[str]) -> None:
    assert regex_literals(pattern) == literals


# Whether every match lies inside one token of the phrases index (no digit, quote or
# control character), and of the cased one (ASCII letters, `` ._-/:,=()`` and any
# character past ASCII).
@pytest.mark.parametrize(
    ("pattern", "phrases", "cased"),
    [
        ("card_dec[a-z]+ed by", True, True),
        ("up[a-z]+ time(out|d)", True, True),
        ("timeout|declined", True, True),
        ("(?:pay|re)ment", True, True),
        ("x{2,}", True, True),
        ("ünï[a-zé]+", True, True),
        ("[]a]x", True, False),  # `]` ends a cased token
        ("issuer \\(order", True, True),
        ("50% off", False, False),  # a digit
        ("[0-9]+", False, False),
        ("[!-/]", False, False),  # `"` is in the range
        ('"level"', False, False),
        ("a.b", False, False),  # `.` is any character
        ("^start", False, False),  # the text's start is not a token's
        ("end$", False, False),
        (r"payment\s+failed", False, False),  # classes of letters are not followed
        (r"\bword", False, False),
        ("[^a]x", False, False),
        ("[[:alpha:]]x", False, False),
        ("(?i)x", False, False),  # flags
        ("(?P<n>x)", False, False),
        ("a{,2}", False, False),  # a brace RE2 reads as text
        ("a*", False, False),  # matches the empty text
        ("(a|)", False, False),
        ("unclosed (group", False, False),
    ],
)
def test_a_regex_is_looked_up_in_a_dictionary_when_every_match_lies_in_one_token(
    pattern: str, phrases: bool, cased: bool
) -> None:
    from limelight.query.needle import _CASED_INDEX, _PHRASES_INDEX

    assert regex_within_tokens(pattern, _PHRASES_INDEX.outside) is phrases
    assert regex_within_tokens(pattern, _CASED_INDEX.outside) is cased


def test_a_regex_reads_the_dictionary_of_its_index_only_where_it_may() -> None:
    frame = Timeframe(1_795_000_000_000, 1_795_003_600_000)
    reads = Dictionaries(Scope("ws", "env"), "limelight.events", frame)

    def sql(needle: Needle, dictionaries: Dictionaries | None = reads) -> str:
        return needle_sql(needle, Params(), dictionaries)

    looked_up = sql(Needle(value="card_dec[a-z]+ed", isRegex=True))
    assert "mergeTreeTextIndex(limelight, events, raw_phrases)" in looked_up
    assert looked_up.startswith("hasAnyTokens(") and "match(raw, " in looked_up  # fresh parts
    cased = sql(Needle(value="Card_dec[a-z]+ed", isRegex=True, matchCase=True))
    assert "mergeTreeTextIndex(limelight, events, raw_cased)" in cased
    # With digits, with less literal text than two characters (`e[a-z]+`, whose tokens
    # may be most of the dictionary), or where no dictionary may be read (a cluster): raw.
    for text in (
        sql(Needle(value="order [0-9]+ placed", isRegex=True)),
        sql(Needle(value="e[a-z]+", isRegex=True)),
        sql(Needle(value="[a-z]+", isRegex=True)),
        sql(Needle(value="card_dec[a-z]+ed", isRegex=True), None),
    ):
        assert "mergeTreeTextIndex" not in text and text.startswith("(")
        assert "match(raw, " in text
    assert "mergeTreeTextIndex" in sql(Needle(value="[a-z]+ed", isRegex=True))
    # Each alternative with its own literal text, or not.
    assert "mergeTreeTextIndex" in sql(Needle(value="timeout|decl[a-z]+", isRegex=True))
    assert "mergeTreeTextIndex" not in sql(Needle(value="timeout|[a-z]+", isRegex=True))


def ddl_text(version: int) -> str:
    folder = resources.files("limelight.store.events") / "ddl"
    [entry] = [e for e in folder.iterdir() if e.name.startswith(f"{version:04d}_")]
    return entry.read_text()


def test_the_indexes_expressions_are_those_their_ddl_states() -> None:
    # The engine uses an index only for the very expression it was declared on.
    assert f"raw_words {WORDS} TYPE" in ddl_text(11)
    assert f"raw_phrases {PHRASES} TYPE" in ddl_text(15)
    assert f"raw_numbers_keys {NUMBERS} TYPE" in ddl_text(27)
    assert f"raw_cased {CASED} TYPE" in ddl_text(19)
    assert f"raw_cased_numbers_keys {CASED_NUMBERS} TYPE" in ddl_text(27)
    assert f"raw_digit_runs {DIGIT_RUNS} TYPE text(tokenizer = ngrams(3))" in ddl_text(26)


def _sql(value: str, **flags: bool) -> str:
    return needle_sql(Needle(value=value, **flags), Params())


@pytest.mark.parametrize(
    "value",
    [
        *("order 12", "ERR-42", "order 1", '"level":"error', '":"', '"status":5', '{"a', "a-1"),
        *('"status":500', "with 503", "code=429", "HTTP 404"),
    ],
)
def test_needles_with_quotes_or_a_number_after_punctuation_are_answered_by_an_index_alone(
    value: str,
) -> None:
    assert _sql(value) == f"{NUMBERS} LIKE {{p0:String}}"


@pytest.mark.parametrize(
    "value",
    ["order 1234", "12 items", "abc12", "abc123", "a 1 b", '\\\\"hi', "x$1", "é 12"],
)
def test_other_needles_with_digits_are_checked_on_raw(value: str) -> None:
    assert "positionCaseInsensitive(raw, " in _sql(value)


@pytest.mark.parametrize("match_case", [False, True])
def test_three_digits_alone_are_answered_by_the_digit_runs_index_alone(match_case: bool) -> None:
    params = Params()
    sql = needle_sql(Needle(value="503", matchCase=match_case), params)
    assert sql == f"hasAllTokens({DIGIT_RUNS}, {{p0:Array(String)}}, 'ngrams')"
    assert params.values == {"p0": ["503"]}


@pytest.mark.parametrize(
    ("value", "grams"),
    [
        ("48213", ["482", "821", "213"]),
        ("503 Service", ["503"]),
        ("id af12345 x9999", ["123", "234", "345", "999"]),
    ],
)
def test_longer_runs_of_digits_are_narrowed_by_all_their_grams(
    value: str, grams: list[str]
) -> None:
    params = Params()
    sql = needle_sql(Needle(value=value), params)
    assert f"hasAllTokens({DIGIT_RUNS}, " in sql and "positionCaseInsensitive(raw, " in sql
    assert grams in params.values.values()


def test_a_number_is_narrowed_by_its_text_and_first_three_digits() -> None:
    params = Params()
    sql = needle_sql(Needle(value="(order 12345), code"), params)
    assert f"{NUMBERS} LIKE {{p0:String}}" in sql
    # "(" is spelled H, " " B, ")" I and "," L; the PHRASES stretches lie inside these.
    assert sql.count(f"{NUMBERS} LIKE ") == 2
    assert "translate(lower(raw)" not in sql
    assert [params.values["p0"], params.values["p1"]] == ["%HorderB123%", "%ILBcode%"]


@pytest.mark.parametrize(
    ("value", "pieces"),
    [
        # A key's start inside a needle, or a `,` at its end, where raw may have `"`.
        ('"level":"error","status":50', ["%AlevelAPAerrorA%", "%LAstatusAP50%"]),
        ('"level":"error",', ["%AlevelAPAerrorA%"]),
        ('x,"y",', ["%LAyA%"]),
    ],
)
def test_a_needle_across_a_keys_start_is_narrowed_by_its_pieces_on_each_side(
    value: str, pieces: list[str]
) -> None:
    params = Params()
    sql = needle_sql(Needle(value=value), params)
    assert "positionCaseInsensitive(raw, " in sql
    assert [v for v in params.values.values() if str(v).startswith("%") and v[1] in "AL"] == pieces
    for match_case in (False, True):  # the cased numbers index cuts there too
        assert CASED_NUMBERS not in needle_sql(Needle(value=value, matchCase=match_case), Params())


@pytest.mark.parametrize("value", [',"status":50', ',"a', '"status":5', ',"x",1'])
def test_a_needle_starting_at_a_keys_start_is_answered_by_an_index_alone(value: str) -> None:
    assert _sql(value) == f"{NUMBERS} LIKE {{p0:String}}"
    assert needle_sql(Needle(value=value, matchCase=True), Params()).startswith(CASED_NUMBERS)


@pytest.mark.parametrize(
    ("value", "spelled"),
    [
        ("Payment failed", "%Payment0failed%"),
        ("Timeout", "%Timeout%"),
        ("OrderService.process()", "%OrderService1process89%"),
        ("user_id=", "%user2id7%"),
        ("GET /api/cart, ok: X-Id", "%GET04api4cart60ok50X3Id%"),
        ("Ta", "%Ta%"),
    ],
)
def test_match_case_needles_of_letters_and_common_punctuation_are_answered_by_an_index_alone(
    value: str, spelled: str
) -> None:
    params = Params()
    assert needle_sql(Needle(value=value, matchCase=True), params) == f"{CASED} LIKE {{p0:String}}"
    assert params.values == {"p0": spelled}


@pytest.mark.parametrize(
    ("value", "spelled"),
    [
        # NUMBERS' characters are spelled in order: `"` a, " " b, "!" c, "-" m, ":" p, "[" u.
        ("code ERR-42", "%code0b1ERR0m19492%"),
        ("ERR-4", "%ERR0m194%"),
        ('"level":"Error', "%0a1level0a10p10a1Error%"),
        ("Payment failed!", "%Payment0b1failed0c1%"),
        ("[Retry]", "%0u1Retry0v1%"),
        ("HTTP/1", "%HTTP0o191%"),
        ('"A":1', "%0a1A0a10p191%"),
        ("ERR-421", "%ERR0m1949291%"),
        ("HTTP 503", "%HTTP0b1959093%"),
    ],
)
def test_match_case_needles_with_numbers_or_quotes_are_answered_by_an_index_alone(
    value: str, spelled: str
) -> None:
    params = Params()
    sql = needle_sql(Needle(value=value, matchCase=True), params)
    assert sql == f"{CASED_NUMBERS} LIKE {{p0:String}}"
    assert params.values == {"p0": spelled}


@pytest.mark.parametrize(
    "value", ["A", "ERR-4213", "abc12", "12 items", "a 1 b", "x$1", "Café au lait", "ü 12"]
)
def test_other_match_case_needles_are_checked_on_raw(value: str) -> None:
    assert "position(raw, {p" in _sql(value, matchCase=True)


def test_a_match_case_needle_is_narrowed_by_its_cased_stretches() -> None:
    params = Params()
    sql = needle_sql(Needle(value="Payment failed! (order 12)", matchCase=True), params)
    cased = [v for k, v in params.values.items() if f"{CASED} LIKE {{{k}:String}}" in sql]
    assert cased == ["%Payment0failed%", "%08order0%"]
    # What the cased stretches imply is not asked again of the lowercase indexes.
    assert PHRASES not in sql
    assert f"{NUMBERS} LIKE " in sql  # "! (order 12": the "!" and the digits
