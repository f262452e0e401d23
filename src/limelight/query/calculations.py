"""Calculations as data: operator -> aggregate SQL template and what it reads.

``{n}`` is the key as a number (NULL when it holds anything else, so strings,
booleans and missing keys are skipped), ``{k}`` the key as one kind, for the
calculations applied to each kind and summed, ``{e}`` whether the key is
present, for a calculation that only asks that of a key (COUNT with a key).

``series`` is the same calculation per time bucket in one pass: the -Resample
combinator over the bucket index ``{i}`` (``{r}`` is ``0, buckets, 1``), giving
an array with one value per bucket. -OrNull keeps "no numbers" null in a
bucket, as it is in the whole (plain ``min`` would give 0).

Percentiles use ``quantileExactInclusive``: exact, and the same definition as
linear interpolation between closest ranks (numpy's default, Python's
``statistics.quantiles(method="inclusive")``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class CalculationSpec:
    name: str
    template: str
    series: str | None = None  # per bucket, see above; None: not computed that way
    needs_key: bool = True
    per_kind: bool = False  # applied to the key as each kind ({k}) and summed
    # With a key, when the calculation reads only whether the key is present ({e}):
    # the total and the series per bucket.
    present: str | None = None
    present_series: str | None = None
    # A distribution over time rather than one value: answered by a statement of its own
    # (``calculations_plan.heatmap_statement``), in a query run only (an alert compares
    # one number with its threshold).
    heatmap: bool = False


COUNT_SERIES = "countResample({r})({i})"


def _numeric(name: str, function: str, level: str | None = None) -> CalculationSpec:
    """A calculation over the key's numbers; ``level`` is a quantile's parameter."""
    if level is None:
        return CalculationSpec(
            name, f"{function}({{n}})", f"{function}OrNullResample({{r}})({{n}}, {{i}})"
        )
    return CalculationSpec(
        name,
        f"{function}({level})({{n}})",
        f"{function}OrNullResample({level}, {{r}})({{n}}, {{i}})",
    )


def _percentile(name: str, level: str) -> CalculationSpec:
    return _numeric(name, "quantileExactInclusive", level)


_PERCENTILES = {
    "P001": "0.001",
    "P01": "0.01",
    "P05": "0.05",
    "P10": "0.1",
    "P25": "0.25",
    "P75": "0.75",
    "P90": "0.9",
    "P95": "0.95",
    "P99": "0.99",
    "P999": "0.999",
}

CALCULATIONS: Mapping[str, CalculationSpec] = {
    spec.name: spec
    for spec in (
        # COUNT with a key counts the events where the key is present.
        CalculationSpec(
            "COUNT",
            "count()",
            COUNT_SERIES,
            needs_key=False,
            present="countIf({e})",
            present_series="countIfResample({r})({e}, {i})",
        ),
        # Per kind, summed: "5" and 5 are two values, 5 and 5.0 one. uniqCombined64 at
        # precision 20 is exact (a hash set) well past 10,000 values, then HyperLogLog.
        # No series form: a HyperLogLog state per bucket made it slower than grouping
        # sets (1.36-1.62 s against 1.24 s over 10M distinct values).
        CalculationSpec("COUNT_DISTINCT", "uniqCombined64(20)({k})", per_kind=True),
        # The sum of no numbers is 0, in the whole and in a bucket.
        CalculationSpec("SUM", "ifNull(sum({n}), 0)", "sumResample({r})({n}, {i})"),
        _numeric("AVG", "avg"),
        _numeric("MIN", "min"),
        _numeric("MAX", "max"),
        _percentile("MEDIAN", "0.5"),
        *(_percentile(name, level) for name, level in _PERCENTILES.items()),
        # The numerically stable forms: the fast ones lose every digit for values far
        # from zero (the variance of unix milliseconds came out 0).
        _numeric("STDDEV", "stddevSampStable"),
        _numeric("VARIANCE", "varSampStable"),
        # Its value in the totals is how many events hold a number at the key (what the
        # heatmap counts); its buckets are in the series (``results``).
        CalculationSpec("HEATMAP", "count({n})", heatmap=True),
    )
}

# The quantile level of each percentile operator, for the reference evaluator and docs.
PERCENTILE_LEVELS: Mapping[str, float] = {
    "MEDIAN": 0.5,
    **{name: float(level) for name, level in _PERCENTILES.items()},
}


def value_name(operator: str, key: str | None, alias: str | None) -> str:
    """The name a calculation's value carries: the alias, else ``OP(key)``, else ``COUNT``."""
    if alias:
        return alias
    return f"{operator}({key})" if key else operator
