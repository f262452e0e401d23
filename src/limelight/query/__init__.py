"""The query layer: definition and validation, compilation to SQL, result shaping.

Pure: it imports neither the stores nor the web framework nor the settings.
``spec.validate_fields`` -> ``compile.compile_run`` -> (the runner executes the
statements) -> ``results.shape``.

Query semantics
===============

Keys
----
- ``_timestamp``: the event time, unix milliseconds (a number).
- ``_dataset``, ``_service``, ``_namespace``, ``_id``: the system fields (strings).
- Any other key is a path into the event: ``data.userId`` finds
  ``{"data": {"userId": ..}}`` and a key named ``"data.userId"`` alike.
  When an event names one path both ways (``{"a.b": 1, "a": {"b": 2}}``),
  its first value counts (a null does not); the event is kept as sent.

A JSON ``null`` and a missing key are "missing". A key holding an array (even an
empty one) or an object is present, as long as the object holds a value
somewhere inside: an empty object (``{}``), or one holding only nulls and
empty objects, holds nothing to find and is missing (the events store keeps no
trace of it outside the raw text). Presence is what EXISTS, DOES_NOT_EXIST,
COUNT with a key and the negated operations test; an object itself is never
compared, grouped or counted as a distinct value.
Every value has a kind: string, number (booleans are not numbers), boolean or
array; an array may mix kinds. A value keeps the kind it was sent with: text
that looks like a date or a number stays text. Integers beyond the 64-bit range
are kept as text.

Filters
-------
Comparisons are typed by the filter's value: a number compares with the
numbers the key holds, a string with its strings, a boolean with its booleans.
A value of another kind, or a missing key, never matches (``"12"`` is not
``12``). A negated operation matches when the key is present and the positive
one does not match, so a missing key matches neither.

| Operation | Value | Matches when the key... |
|---|---|---|
| ``=`` | string, number, boolean | equals the value |
| ``!=`` | string, number, boolean | is present and does not equal it |
| ``>`` ``>=`` ``<`` ``<=`` | number, string | compares so (strings byte-wise) |
| ``LIKE`` | string | matches the SQL LIKE pattern (``%`` any run, ``_`` one character) |
| ``NOT_LIKE`` | string | is present and does not match the pattern |
| ``INCLUDES`` | any literal | is a string holding the text, or an array with the element |
| ``DOES_NOT_INCLUDE`` | any literal | is present and does not include the value |
| ``MATCH_REGEX`` | string | is a string in which the RE2 pattern finds a match |
| ``STARTS_WITH`` | string | is a string starting with the value |
| ``EXISTS`` | none (ignored) | is present (an object when it holds a value) |
| ``DOES_NOT_EXIST`` | none (ignored) | is missing |
| ``IN`` | array or "a, b" | equals one of the values |
| ``NOT_IN`` | array or "a, b" | is present and equals none of the values |

- A comma-separated string is trimmed and split; a part that reads as a number
  also matches as that number (``"200, ok"`` matches ``200``, ``"200"`` and ``"ok"``).
  IN and NOT_IN take at most 30,000 values.
- A value ``{key, type}`` compares with another key of the same event, both
  read as ``type`` (default ``string``); not for IN / NOT_IN.
- ``filter_combination`` ``AND`` (default) or ``OR`` joins the filters.
- ``namespaces``: ``{type, value}`` with type ``dataset``, ``service`` or
  ``namespace`` selects on that system field; any other type (``lambda``, ..)
  selects on ``_namespace``. Entries of one field are alternatives (OR), fields
  combine with AND.
- ``needle`` ``{value, isRegex, matchCase}`` searches the event's stored JSON text: a
  substring (case-insensitive for ASCII letters unless ``matchCase``) or an RE2
  pattern (``(?i)`` added unless ``matchCase``). What is fast: a needle of two or more
  ASCII characters without digits or ``"`` (``timeout``, also inside a word:
  ``imeou``; phrases such as ``payment failed``, ``card_declined``, ``user.id``,
  ``/api/cart``, ``issuer (order``), and one with ``"`` or ending in one to three digits
  after punctuation or a space (``order 12``, ``ERR-42``, ``"level":"error``,
  ``"status":500``, ``"status":50``, ``with 503``), is looked up in inverted indexes
  of the events' text and costs about what a COUNT does, however many events hold it;
  but not one of these that runs from one JSON field into the next key
  (``error","status``, or ``"error",`` with a ``,`` at its end), which reads the events
  holding its pieces on each side. So
  is a ``matchCase`` needle of two or more ASCII letters, spaces and ``._-/:,=()``
  (``Payment failed``, ``OrderService.process()``, ``user_id=``, ``GET /api/cart``),
  and, through a second cased index, one with quotes, more punctuation or one to
  three digits at its end after punctuation (``code ERR-42``, ``"level":"Error``,
  ``HTTP 503``, ``[Retry]``), and a needle of three digits alone (``503``, found
  anywhere in a number). So is a regex that finds what one of at most 20 such needles
  finds (or 1,000 of three digits): literal text and classes of characters (``[0-9]``,
  ``\\d``, ``[45]``), each
  repeated a fixed number of times but at its two ends (``ERR-[0-9]+`` is found where one
  of ``ERR-0`` to ``ERR-9`` is, ``5\\d\\d`` where one of ``500`` to ``599`` is, and
  ``card_declined`` is the needle), each of its needles looked up; without
  ``matchCase``, one without ``k`` or ``s``, which RE2 also finds as the Kelvin sign
  and the long s. So is a regex that can only match text without digits, ``"``
  or control characters, holds two characters of literal text or more in each
  alternative, has no ``^``, ``$`` or ``.``, names no class with a backslash (``\\d``, ``\\s``,
  ``\\b``) and sets no flag (``card_dec[a-z]+ed by``, ``timeout|declined``; with ``matchCase``,
  letters, characters past ASCII, the space and ``._-/:,=()`` only), where the deployment
  allows it (``LIMELIGHT_REGEX_DICTIONARIES``, off by default: the dictionaries hold every
  workspace's tokens, and another workspace's events can make such a search slow or
  run out of memory): the tokens of an index's dictionary it matches are looked up, as
  a word is. Otherwise, and on a cluster, whose shards each hold their own
  dictionaries, it reads the events' text as below.
  Any other needle (starting with a digit, a longer
  number, a number right after a letter, other scripts, one of ``$ < > ^ ~``, a
  backslash or a backquote, one character) and any other regex read the events'
  text, but only in the blocks of events where the indexes find its parts (its text
  with the first three digits of each number, every three consecutive digits of its
  numbers, a ``matchCase`` needle's cased stretches, a regex's literal text) and an
  ngram index cannot rule it out: fast when few events hold it, a scan when many do.
- The timeframe is ``from`` inclusive, ``to`` exclusive.

Calculations
------------
Numeric calculations read only the numbers a key holds (strings such as
``"12"``, booleans and missing keys are skipped).

Integers beyond 2^53 (snowflake ids, UInt64 up to 2^64 - 1), which a
double-precision float cannot hold, are compared, grouped, counted apart by
COUNT_DISTINCT and listed by field values exactly as sent: ``id = 9007199254740993``
does not match 9007199254740992. A filter's own integer is compared so up to
2^64 - 1. A whole number written as a float is the integer its shortest form
writes, in an event and from 2^53 on in a filter: ``1.152921504606847e18`` is
1152921504606847000 (not the double's 1152921504606846976), and ``1e16`` does not
match 10^16 + 1. Larger numbers and a key compared with another key go through
double precision. SUM, AVG, MIN, MAX,
percentiles and the other calculations are computed in double precision.

| Operator | Value |
|---|---|
| ``COUNT`` | events; with a key, the events where the key is present |
| ``COUNT_DISTINCT`` | distinct strings + numbers + booleans (see below) |
| ``SUM`` | the sum of the numbers, 0 when there are none |
| ``AVG``, ``MIN``, ``MAX`` | null when there are no numbers |
| ``MEDIAN``, ``P001`` .. ``P999`` | exact percentile (see below); MEDIAN = P50 |
| ``STDDEV``, ``VARIANCE`` | sample statistics; null for fewer than two numbers |
| ``HEATMAP`` | events with a number at the key; per time bucket, in ``series`` |

- Percentiles: ``quantileExactInclusive``, linear interpolation between
  closest ranks (numpy's default). P001 is the 0.1th percentile, P01 the 1st,
  P05 the 5th .. P99 the 99th, P999 the 99.9th.
- COUNT_DISTINCT: ``5`` and ``5.0`` are one value, ``"5"`` another; arrays are
  not counted. ``uniqCombined64(20)``: exact (a hash set) to well past 10,000
  values, then a HyperLogLog sketch (about 0.1% error).
- STDDEV and VARIANCE are ``stddevSampStable`` and ``varSampStable`` (divided
  by n - 1; the numerically stable forms).
- HEATMAP (one per query, in query runs only: an alert cannot watch it) adds
  to every point of ``series`` its ``buckets``:
  ``{"time": ..., "data": [...], "buckets": [{"min": 1.0, "max": 1.19, "count": 12}, ...]}``,
  the numbers of every event the query selects (groups do not split it)
  counted in log-spaced value buckets, smallest first, only the buckets that
  hold any. A bucket holds ``min <= v < max`` (mirrored for negative numbers:
  ``min < v <= max``; 0 is a bucket of its own). The edges are powers of
  2^(1/8), with neighbours joined (2, 4, 8... at a time) until the values'
  range fits in 40 buckets of each sign, the same edges at every time.

A value is named by its ``alias``, else ``OP(key)``, else ``COUNT``; names are
unique per query and every value set also holds ``_count`` (events in the group).

Results
-------
- Groups (``group_bys``) hold the key's string, number or boolean value
  (``5`` and ``"5"`` are two groups, ``5`` and ``5.0`` one); a missing key, an
  array or an object groups as null. The group-by ``type`` is kept but does not convert.
  ``group_bys`` without calculations count per group.
- ``orders`` name a group-by key or a value name; without orders the first
  calculation sorts largest first; ties are broken by the groups, ascending.
  Nulls sort last.
- ``aggregates``: one entry per group, at most ``limit`` (from ``offset``).
- ``series``: one entry per bucket of ``granularity`` over the whole timeframe
  (``time`` = bucket start, unix milliseconds, buckets aligned to ``from``;
  default: a readable step giving about 60 buckets; at most 1,000 buckets),
  each with the groups shown in ``aggregates`` that have events in the bucket
  (per bucket at most ``limit + offset`` groups, the top ones by the query's order).
- Without calculations: ``events`` newest first (time, then id, descending),
  whole with their system fields, or only the ``keys`` asked for (a key the
  event lacks is left out); ``count`` is the number of matching events.
- ``limit``: the run's limit, capped by the query's own ``limit``; 1 to 10,000.
"""
