"""A list written as text: integers beyond a double as integers, within the Int64 the
spec's own integers are; longer digit runs as the float they read as, never an error."""

from limelight.query.operators import split_list


def test_an_integer_beyond_a_double_is_that_integer() -> None:
    assert split_list("9007199254740993, 5") == ["9007199254740993", 9007199254740993, "5", 5.0]
    assert split_list("-9223372036854775808") == ["-9223372036854775808", -(2**63)]


def test_beyond_int64_or_past_pythons_digit_limit_is_a_float_not_an_error() -> None:
    assert split_list(str(2**63)) == [str(2**63), float(2**63)]
    huge = "9" * 5000
    assert split_list(huge) == [huge, float("inf")]
