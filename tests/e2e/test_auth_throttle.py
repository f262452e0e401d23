"""The failed-authentication limits hold against forged headers and concurrent guesses.

Each test speaks from its own loopback address (all of 127.0.0.0/8 reaches the
server), so the per-address counts of one test do not touch another's.
"""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests import web
from tests.e2e.oauth_support import Browser, new_user, post_forms, register
from tests.support import NO_BOUNDARY_BEFORE_2033, LiveServer, launch

PER_ACCOUNT = 10
PER_IP = 20
PROXY = "127.0.0.2"


@pytest.fixture(scope="module")
def throttled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    srv = launch(
        tmp_path_factory.mktemp("throttled"),
        {
            "LIMELIGHT_AUTH_FAILURES_PER_ACCOUNT": str(PER_ACCOUNT),
            "LIMELIGHT_AUTH_FAILURES_PER_IP": str(PER_IP),
            # Windows are aligned on the clock: a day-long one ends at midnight UTC,
            # which a test may cross; this one ends in 2033.
            "LIMELIGHT_AUTH_FAILURE_WINDOW": str(NO_BOUNDARY_BEFORE_2033),
            "LIMELIGHT_TRUSTED_PROXIES": PROXY,
        },
    )
    yield srv
    srv.stop()


class Guesser(Browser):
    """A browser speaking from ``address``."""

    def __init__(self, server: LiveServer, address: str) -> None:
        self.client = web.Client(
            base_url=server.url,
            follow_redirects=False,
            timeout=60,
            transport=web.HTTPTransport(local_address=address),
        )

    def login_form(self) -> dict[str, str]:
        page = self.client.get("/login")
        return dict(post_forms(page.text, "/login")[0].fields)

    def guess(self, form: dict[str, str], email: str, forwarded_for: str | None = None) -> int:
        headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
        data = form | {"email": email, "password": "not the password"}
        return self.client.post("/login", data=data, headers=headers).status_code


def unknown_email() -> str:
    return f"nobody-{uuid.uuid4().hex[:8]}@example.com"


def test_a_forged_x_forwarded_for_does_not_escape_the_per_address_limit(
    throttled: LiveServer,
) -> None:
    guesser = Guesser(throttled, "127.0.0.1")
    form = guesser.login_form()
    # Each guess on a fresh account and under a fresh forged address: only the
    # per-address limit of the real peer can stop them.
    answers = [
        guesser.guess(form, unknown_email(), forwarded_for=f"203.0.113.{n}")
        for n in range(PER_IP + 5)
    ]
    assert answers == [401] * PER_IP + [429] * 5
    guesser.close()


def test_behind_a_trusted_proxy_each_forwarded_client_is_limited_on_its_own(
    throttled: LiveServer,
) -> None:
    proxy = Guesser(throttled, PROXY)
    form = proxy.login_form()
    clients = [proxy.guess(form, unknown_email(), f"198.51.100.{n}") for n in range(PER_IP + 5)]
    assert clients == [401] * (PER_IP + 5)
    one = [proxy.guess(form, unknown_email(), "198.51.100.250") for _ in range(PER_IP + 1)]
    assert one == [401] * PER_IP + [429]
    proxy.close()


def concurrently(count: int, guess: object) -> Counter[int]:
    start = threading.Barrier(count)

    def one(n: int) -> int:
        start.wait()
        return guess(n)  # type: ignore[operator, no-any-return]

    with ThreadPoolExecutor(count) as pool:
        return Counter(pool.map(one, range(count)))


def test_concurrent_login_guesses_at_one_account_get_at_most_the_limit_of_password_checks(
    throttled: LiveServer,
) -> None:
    email = unknown_email()  # argon2 runs for an unknown email all the same
    guessers = [Guesser(throttled, "127.0.0.3") for _ in range(60)]
    forms = [g.login_form() for g in guessers]
    answers = concurrently(60, lambda n: guessers[n].guess(forms[n], email))
    # A 401 is a password checked and found wrong; a 429 was refused before the check.
    assert answers[401] <= PER_ACCOUNT, answers
    assert answers[401] + answers[429] == 60, answers
    for g in guessers:
        g.close()


def test_concurrent_client_secret_guesses_get_at_most_the_limit_of_checks(
    throttled: LiveServer, tmp_path: Path
) -> None:
    integration = register(throttled, tmp_path)
    client = web.Client(timeout=60, transport=web.HTTPTransport(local_address="127.0.0.4"))
    wrong = {
        "grantType": "authorization_code",
        "clientId": integration.client_id,
        "clientSecret": "ll_cs_guess",
        "redirect": integration.redirect,
        "code": "ll_ac_never-issued",
    }

    def guess(_: int) -> int:
        return client.post(f"{throttled.url}/oauth/token", json=wrong).status_code

    answers = concurrently(60, guess)
    assert answers[401] <= PER_ACCOUNT, answers
    assert answers[401] + answers[429] == 60, answers
    client.close()


def test_padding_the_email_does_not_make_a_new_limit_for_the_same_account(
    throttled: LiveServer,
) -> None:
    email, password = new_user(throttled)
    form_of: dict[str, dict[str, str]] = {}

    def attempt(address: str, as_typed: str, secret: str) -> int:
        guesser = Guesser(throttled, address)
        form = form_of.setdefault(address, guesser.login_form())
        data = form | {"email": as_typed, "password": secret}
        status = guesser.client.post("/login", data=data).status_code
        guesser.close()
        return status

    # Each guess from its own address, so only the account's limit can stop them.
    assert [attempt(f"127.0.5.{n}", email, "wrong") for n in range(PER_ACCOUNT)] == [401] * 10
    assert attempt("127.0.5.100", email, password) == 429
    # Whitespace past 254 characters, then a character: no longer the account's email
    # (it was found by a lookup that cut and stripped it, under a limit of its own).
    padded = [email + " " * (250 - len(email)) + "\t" * n + " " * 8 + "x" for n in range(5)]
    assert [attempt(f"127.0.6.{n}", p, password) for n, p in enumerate(padded)] == [401] * 5
    assert attempt("127.0.5.101", email, password) == 429
