"""A list written as text: integers beyond a double as integers, within the Int64 and
UInt64 the spec's own integers are; longer digit runs as the float they read as, never an
error."""

import math

from limelight.query.operators import exact_number, list_values, split_list


def test_an_integer_beyond_a_double_is_that_integer() -> None:
    assert split_list("9007199254740993, 5") == ["9007199254740993", 9007199254740993, "5", 5.0]
    assert split_list("-9223372036854775808") == ["-9223372036854775808", -(2**63)]
    assert split_list(str(2**64 - 1)) == [str(2**64 - 1), 2**64 - 1]


def test_beyond_the_engines_integers_or_pythons_digit_limit_is_a_float_not_an_error() -> None:
    assert split_list(str(2**64)) == [str(2**64), float(2**64)]
    # Twenty digits below Int64's least: not an integer the engine could be sent.
    assert split_list("-99999999999999999999") == ["-99999999999999999999", -1e20]
    huge = "9" * 5000
    assert split_list(huge) == [huge, float("inf")]


def test_a_whole_float_from_2_53_on_is_compared_as_the_integer_an_event_stores() -> None:
    assert type(exact_number(1e16)) is int and exact_number(1e16) == 10**16
    assert exact_number(float(2**53)) == 2**53 and type(exact_number(float(2**53))) is int
    # Its shortest digits, as an event's float is stored, not the double's own digits.
    assert exact_number(1.152921504606847e18) == 1152921504606847000
    assert exact_number(float(2**63)) == 9223372036854776000
    for kept in (1.5, 2.0**53 - 1, 1e20, float(2**64), -1e19):
        assert type(exact_number(kept)) is float and exact_number(kept) == kept
    for kept in ("1e16", True):
        assert exact_number(kept) is kept
    assert math.copysign(1, exact_number(-0.0)) == 1  # has() tells -0.0 from 0
    assert list_values([1e16, 5.0]) == [10**16, 5.0]
    assert list_values("1e16") == ["1e16", 10**16]
