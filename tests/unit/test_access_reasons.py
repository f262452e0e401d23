"""The reason a refused request's access-log line gives: short, one line, no secret."""

from __future__ import annotations

from starlette.requests import Request

from limelight.auth.secrets import SecretKind, new_secret
from limelight.errors import BadRequest
from limelight.web.access import MAX_REASON, note_error, reason_of, reason_text


def test_a_secret_in_a_message_is_cut_to_its_prefix() -> None:
    key, session = new_secret(SecretKind.ADMIN_KEY), new_secret(SecretKind.SESSION)
    text = reason_text(f"{key!r} is not a dataset; nor is {session}")
    assert text == "'ll_sk_…' is not a dataset; nor is ll_ss_…"


def test_a_reason_is_one_line_of_at_most_max_reason_characters() -> None:
    assert reason_text("first line\n  second\tline ") == "first line second line"
    long = reason_text("x" * 1000)
    assert len(long) == MAX_REASON and long.endswith("…")


def test_an_error_names_its_fields_and_not_what_it_says_of_their_values() -> None:
    request = Request({"type": "http", "method": "POST", "path": "/", "headers": []})
    errors = [
        {"field": f"destinations[{i}].url", "message": "https://hooks.example/T0/B0/s3cr3t"}
        for i in range(5)
    ]
    note_error(request, BadRequest(message="Invalid alert", errors=errors))
    assert reason_of(request.scope) == (
        "Invalid alert (destinations[0].url, destinations[1].url, destinations[2].url, ...)"
    )
