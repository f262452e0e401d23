"""The security checklist's negative cases, against the real server.

Row ids (T1, A1, E5, ...) are those of reference/oauth-security-checklist.md.
"""

from __future__ import annotations

import base64
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from limelight.auth.oauth.pkce import s256
from tests import web
from tests.e2e.oauth_support import (
    REDIRECT,
    Browser,
    Installed,
    Integration,
    environments,
    exchange,
    installed,
    new_user,
    post_forms,
    query_of,
    refresh,
    register,
    register_by_cli,
)
from tests.support import NO_BOUNDARY_BEFORE_2033, LiveServer, Tenant, launch, unavailable


def token_post(server: LiveServer, **kw: Any) -> httpx.Response:
    return web.post(f"{server.url}/oauth/token", timeout=30, **kw)


def body(integration: Integration, **fields: Any) -> dict[str, Any]:
    base = {
        "grantType": "authorization_code",
        "clientId": integration.client_id,
        "clientSecret": integration.client_secret,
        "redirect": integration.redirect,
        "code": "ll_ac_never-issued",
    }
    return {k: v for k, v in (base | fields).items() if v is not None}


@pytest.fixture(scope="module")
def one(server: LiveServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    """One installation shared by the tests that only add codes and tokens to it."""
    inst = installed(server, tmp_path_factory.mktemp("one"), server.new_tenant().workspace_id)
    yield inst
    inst.browser.close()


def fresh_code(server: LiveServer, inst: Installed, **extra: str) -> str:
    return inst.browser.install(inst.integration, **extra)["code"]


def assert_error(answer: httpx.Response, status: int, error: str) -> None:
    assert answer.status_code == status, answer.text
    assert answer.json()["error"] == error
    assert answer.json()["message"]
    # T9: never cached, errors included.
    assert answer.headers["cache-control"] == "no-store"
    assert answer.headers["pragma"] == "no-cache"


# -- T1, T7, T8, T9: the token endpoint's requests --------------------------------------


def test_t1_token_endpoint_is_post_only_and_refuses_credentials_in_the_url(
    server: LiveServer, one: Installed
) -> None:
    got = web.get(f"{server.url}/oauth/token")
    assert got.status_code == 405
    assert got.headers["allow"] == "POST"
    in_url = token_post(
        server,
        params={"clientSecret": one.integration.client_secret},
        json=body(one.integration, clientSecret=None),
    )
    assert_error(in_url, 400, "invalid_request")


BAD_REQUESTS: list[tuple[str, dict[str, Any], int, str]] = [
    # (case, how the request differs, status, error)
    ("no grantType", {"json": {"grantType": None}}, 400, "invalid_request"),
    ("unknown grantType", {"json": {"grantType": "password"}}, 400, "unsupported_grant_type"),
    ("client_credentials", {"json": {"grantType": "client_credentials"}}, 400,
     "unsupported_grant_type"),
    ("no code", {"json": {"code": None}}, 400, "invalid_request"),
    ("no redirect", {"json": {"redirect": None}}, 400, "invalid_request"),
    ("unknown key", {"json": {"scope": "all"}}, 400, "invalid_request"),
    ("snake_case key in JSON", {"json": {"grant_type": "authorization_code"}}, 400,
     "invalid_request"),
    ("number instead of string", {"json": {"code": 12345}}, 400, "invalid_request"),
    ("array instead of string", {"json": {"clientId": ["a", "b"]}}, 400, "invalid_request"),
    ("no clientSecret", {"json": {"clientSecret": None}}, 401, "invalid_client"),
    ("no clientId", {"json": {"clientId": None}}, 401, "invalid_client"),
    ("wrong secret", {"json": {"clientSecret": "ll_cs_wrong"}}, 401, "invalid_client"),
    ("unknown client", {"json": {"clientId": "nosuchclient"}}, 401, "invalid_client"),
    # Refused before any lookup (PostgreSQL's text holds no U+0000).
    ("NUL in clientId", {"json": {"clientId": "a\x00b"}}, 400, "invalid_request"),
    ("line break in code", {"json": {"code": "ll_ac_x\n"}}, 400, "invalid_request"),
    ("NUL in a form", {"raw": b"grant_type=refresh_token&refresh_token=a%00b",
                       "type": "application/x-www-form-urlencoded"}, 400, "invalid_request"),
    ("a token as secret", {"json": {"clientSecret": "ll_at_x"}}, 401, "invalid_client"),
    ("unknown code", {"json": {"code": "ll_ac_unknown"}}, 400, "invalid_grant"),
    ("refresh without token", {"json": {"grantType": "refresh_token", "code": None}}, 400,
     "invalid_request"),
    ("not JSON", {"raw": b"{grantType:", "type": "application/json"}, 400, "invalid_request"),
    ("JSON array", {"raw": b"[]", "type": "application/json"}, 400, "invalid_request"),
    ("text/plain", {"raw": b"hello", "type": "text/plain"}, 400, "invalid_request"),
    ("duplicate key", {"raw": b"DUP", "type": "application/json"}, 400, "invalid_request"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "change", "status", "error"), BAD_REQUESTS, ids=[c[0] for c in BAD_REQUESTS]
)
def test_t7_t8_bad_token_requests_get_rfc6749_errors(
    server: LiveServer, one: Installed, case: str, change: dict[str, Any], status: int, error: str
) -> None:
    if "raw" in change:
        raw = change["raw"]
        if raw == b"DUP":  # the same key twice: which one would win is up to the parser
            cid = one.integration.client_id
            raw = (
                f'{{"grantType":"authorization_code","clientId":"{cid}","clientId":"{cid}",'
                f'"clientSecret":"{one.integration.client_secret}","redirect":"{REDIRECT}",'
                '"code":"ll_ac_x"}'
            ).encode()
        answer = token_post(server, content=raw, headers={"Content-Type": change["type"]})
    else:
        answer = token_post(server, json=body(one.integration, **change["json"]))
    assert_error(answer, status, error)


def basic(client_id: str, secret: str) -> str:
    raw = f"{quote(client_id, safe='')}:{quote(secret, safe='')}".encode()
    return "Basic " + base64.b64encode(raw).decode()


def test_t7_http_basic_and_form_bodies_use_the_standard_names(
    server: LiveServer, one: Installed
) -> None:
    i = one.integration
    form = {"grant_type": "refresh_token", "refresh_token": one.tokens["refreshToken"]}
    ok = token_post(
        server, data=form, headers={"Authorization": basic(i.client_id, i.client_secret)}
    )
    assert ok.status_code == 200, ok.text
    assert set(ok.json()) == {"access_token", "expires_in", "token_type"}
    assert ok.headers["cache-control"] == "no-store"

    wrong = token_post(server, data=form, headers={"Authorization": basic(i.client_id, "ll_cs_x")})
    assert_error(wrong, 401, "invalid_client")
    assert wrong.headers["www-authenticate"].startswith("Basic")
    assert wrong.json()["error_description"]  # what client libraries show

    both = token_post(
        server,
        data=form | {"client_secret": i.client_secret},
        headers={"Authorization": basic(i.client_id, i.client_secret)},
    )
    assert_error(both, 400, "invalid_request")

    dup = token_post(
        server,
        content=f"grant_type=refresh_token&grant_type=refresh_token&client_id={i.client_id}"
        f"&client_secret={i.client_secret}&refresh_token=x",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert_error(dup, 400, "invalid_request")


# -- T2, T3, T5, T6, T10: codes -----------------------------------------------------------


def test_t2_a_reused_code_is_refused_and_revokes_what_it_was_exchanged_for(
    server: LiveServer, one: Installed
) -> None:
    code = fresh_code(server, one)
    first = exchange(server, one.integration, code)
    assert first.status_code == 200
    key = environments(server, first.json()["accessToken"]).json()[0]["apiKey"]
    assert server.send(key, "logs", [{"n": 1}]).status_code == 202

    second = exchange(server, one.integration, code)
    assert_error(second, 400, "invalid_grant")
    assert environments(server, first.json()["accessToken"]).status_code == 401
    assert_error(refresh(server, one.integration, first.json()["refreshToken"]), 400,
                 "invalid_grant")  # fmt: skip
    assert server.send(key, "logs", [{"n": 2}]).status_code == 401
    # The installation made before, from another code, is untouched.
    assert environments(server, one.tokens["accessToken"]).status_code == 200


def concurrent_exchanges(server: LiveServer, inst: Installed, n: int = 8) -> list[httpx.Response]:
    code = fresh_code(server, inst)
    barrier = threading.Barrier(n)
    results: list[httpx.Response] = []
    lock = threading.Lock()

    def attempt() -> None:
        barrier.wait()
        answer = exchange(server, inst.integration, code)
        with lock:
            results.append(answer)

    threads = [threading.Thread(target=attempt) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return results


def test_t3_concurrent_exchanges_of_one_code_on_sqlite_exactly_one_wins(
    server: LiveServer, tmp_path: Path
) -> None:
    # An integration of its own: the failed authentications other tests make with a
    # shared one count towards its per-client limit (T11), and eight attempts in flight
    # on top of them could meet it and be answered 429.
    inst = installed(server, tmp_path, server.new_tenant().workspace_id)
    results = concurrent_exchanges(server, inst)
    inst.browser.close()
    assert sorted(r.status_code for r in results) == [200] + [400] * 7
    assert {r.json()["error"] for r in results if r.status_code == 400} == {"invalid_grant"}


@pytest.fixture(scope="module")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server of its own on a fresh PostgreSQL database (127.0.0.1:5432)."""
    try:
        import psycopg

        admin = psycopg.connect(
            "postgresql://127.0.0.1:5432/test", autocommit=True, connect_timeout=3
        )
    except Exception as exc:  # noqa: BLE001 - any failure to connect means: no PostgreSQL here
        unavailable(f"PostgreSQL at 127.0.0.1:5432/test is not reachable: {exc}")
    name = f"ll_oauth_{uuid.uuid4().hex[:10]}"
    admin.execute(f'CREATE DATABASE "{name}"')
    url = f"postgresql://127.0.0.1:5432/{name}"
    srv = launch(tmp_path_factory.mktemp("pg-server"), {"LIMELIGHT_DATABASE_URL": url})
    try:
        yield srv
    finally:
        srv.stop()
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.close()


@pytest.mark.postgres
def test_t3_concurrent_exchanges_of_one_code_on_postgresql_exactly_one_wins(
    postgres_server: LiveServer, tmp_path: Path
) -> None:
    t = postgres_server.new_tenant()
    inst = installed(postgres_server, tmp_path, t.workspace_id)
    for _ in range(3):
        results = concurrent_exchanges(postgres_server, inst)
        assert sorted(r.status_code for r in results) == [200] + [400] * 7
    # Refused (replayed) exchanges revoked what the winner got.
    winner = next(r for r in results if r.status_code == 200)
    assert environments(postgres_server, winner.json()["accessToken"]).status_code == 401
    inst.browser.close()


def test_t5_a_code_is_bound_to_its_client(
    server: LiveServer, one: Installed, tmp_path: Path
) -> None:
    other = register(server, tmp_path)  # same redirect URL, different client
    code = fresh_code(server, one)
    stolen = exchange(server, other, code)
    assert_error(stolen, 400, "invalid_grant")
    # The other client's attempt neither used nor burnt the code.
    assert exchange(server, one.integration, code).status_code == 200


@pytest.mark.parametrize(
    "redirect",
    [
        REDIRECT + "/",
        REDIRECT.upper(),
        REDIRECT.replace("app.example.com", "APP.example.com"),
        REDIRECT + "?x=1",
        REDIRECT + "#f",
        "https://evil.example/oauth/callback",
    ],
)
def test_t6_the_redirect_must_be_identical(
    server: LiveServer, one: Installed, redirect: str
) -> None:
    code = fresh_code(server, one)
    assert_error(exchange(server, one.integration, code, redirect=redirect), 400, "invalid_grant")
    assert exchange(server, one.integration, code).status_code == 200


VERIFIER = "a" * 43
CHALLENGE = s256(VERIFIER)


@pytest.mark.parametrize(
    ("challenge", "verifier", "error"),
    [
        (CHALLENGE, None, "invalid_grant"),  # a sent challenge forces the verifier
        (CHALLENGE, "b" * 43, "invalid_grant"),
        (CHALLENGE, "a" * 42, "invalid_grant"),
        (None, VERIFIER, "invalid_request"),  # a verifier without a challenge
    ],
)
def test_t10_pkce_s256(
    server: LiveServer, one: Installed, challenge: str | None, verifier: str | None, error: str
) -> None:
    extra = {"code_challenge": challenge, "code_challenge_method": "S256"} if challenge else {}
    code = fresh_code(server, one, **extra)
    wrong = exchange(
        server, one.integration, code, **({"codeVerifier": verifier} if verifier else {})
    )
    assert_error(wrong, 400, error)
    if challenge:
        right = exchange(server, one.integration, code, codeVerifier=VERIFIER)
        assert right.status_code == 200


def test_t10_plain_pkce_is_refused_back_at_the_integration(
    server: LiveServer, one: Installed
) -> None:
    url = one.browser.authorize_url(
        one.integration, code_challenge=VERIFIER, code_challenge_method="plain"
    )
    answer = one.browser.client.get(url)
    assert answer.status_code == 303
    back = query_of(answer.headers["location"])
    assert back["error"] == "invalid_request" and back["state"] == "xyz-123"


# -- R1, R4: refresh and revocation ------------------------------------------------------


def test_r1_a_refresh_token_works_only_for_its_client(
    server: LiveServer, one: Installed, tmp_path: Path
) -> None:
    other = register(server, tmp_path)
    assert_error(refresh(server, other, one.tokens["refreshToken"]), 400, "invalid_grant")
    wrong_redirect = token_post(server, json={
        "grantType": "refresh_token", "clientId": one.integration.client_id,
        "clientSecret": one.integration.client_secret, "redirect": "https://evil.example/cb",
        "refreshToken": one.tokens["refreshToken"],
    })  # fmt: skip
    assert_error(wrong_redirect, 400, "invalid_grant")
    # An access token is not a refresh token.
    assert_error(refresh(server, one.integration, one.tokens["accessToken"]), 400, "invalid_grant")
    assert refresh(server, one.integration, one.tokens["refreshToken"]).status_code == 200


def test_r4_revocation(server: LiveServer, tenant: Tenant, tmp_path: Path) -> None:
    one = installed(server, tmp_path, tenant.workspace_id)
    other = register(server, tmp_path)
    url = f"{server.url}/oauth/revoke"
    mine = {"clientId": one.integration.client_id, "clientSecret": one.integration.client_secret}
    theirs = {"clientId": other.client_id, "clientSecret": other.client_secret}
    # Another client cannot revoke it (and cannot tell that it exists).
    answer = web.post(url, json=theirs | {"token": one.tokens["accessToken"]})
    assert answer.status_code == 200
    assert environments(server, one.tokens["accessToken"]).status_code == 200
    assert web.post(url, json=mine | {"token": "ll_at_unknown"}).status_code == 200
    unauthenticated = web.post(url, json={"token": one.tokens["accessToken"]})
    assert_error(unauthenticated, 401, "invalid_client")
    assert web.post(url, json=mine | {"token": one.tokens["accessToken"]}).status_code == 200
    assert environments(server, one.tokens["accessToken"]).status_code == 401
    # Revoking the access token leaves the refresh token alone.
    assert refresh(server, one.integration, one.tokens["refreshToken"]).status_code == 200


# -- E1, E2, E4, E5: the environments endpoint and token confusion -------------------------


@pytest.mark.parametrize(
    ("authorization", "error"),
    [
        ("Bearer ll_at_" + "x" * 43, 'error="invalid_token"'),
        ("Bearer", 'error="invalid_token"'),
        ("Basic abc", 'error="invalid_token"'),
        ("Bearer " + "x" * 500, 'error="invalid_token"'),
        ("ll_at_nobearer", 'error="invalid_token"'),
    ],
)
def test_e1_bad_bearer_tokens_get_401_with_a_challenge(
    server: LiveServer, authorization: str, error: str
) -> None:
    answer = web.get(f"{server.url}/oauth/environments", headers={"Authorization": authorization})
    assert_error(answer, 401, "invalid_token")
    assert answer.headers["www-authenticate"].startswith("Bearer")
    assert error in answer.headers["www-authenticate"]


def test_e1_e2_no_token_and_token_in_the_url(server: LiveServer, one: Installed) -> None:
    missing = web.get(f"{server.url}/oauth/environments")
    assert_error(missing, 401, "invalid_token")
    assert missing.headers["www-authenticate"] == 'Bearer realm="limelight"'
    in_url = web.get(
        f"{server.url}/oauth/environments", params={"access_token": one.tokens["accessToken"]}
    )
    assert_error(in_url, 400, "invalid_request")


def test_e4_only_the_consented_environments(
    server: LiveServer, tenant: Tenant, tmp_path: Path
) -> None:
    staging = server.cli_json(
        "environments", "create", "staging", "--workspace", tenant.workspace_id
    )
    integration = register(server, tmp_path)
    email, password = new_user(server, tenant.workspace_id)
    browser = Browser(server)
    browser.login(email, password)
    page = browser.consent(browser.authorize_url(integration))
    assert "staging" in page.text  # offered ...
    answer = browser.decide(page, environment=[staging["environmentId"]])  # ... and chosen alone
    code = query_of(answer.headers["location"])["code"]
    tokens = exchange(server, integration, code).json()
    listed = environments(server, tokens["accessToken"]).json()
    assert [e["environmentId"] for e in listed] == [staging["environmentId"]]
    browser.close()


def test_e5_token_confusion_both_ways(server: LiveServer, tenant: Tenant, one: Installed) -> None:
    access, refresh_token = one.tokens["accessToken"], one.tokens["refreshToken"]
    minted = environments(server, access).json()[0]["apiKey"]
    # OAuth tokens are not API keys ...
    for token in (access, refresh_token):
        assert server.send(token, "logs", [{"n": 1}]).status_code == 401
        recent = web.get(f"{server.url}/v1/events", headers={"Authorization": token})
        assert recent.status_code == 401
        queries = web.get(f"{server.url}/v1/queries", headers={"Authorization": token})
        assert queries.status_code == 401
    # ... and API keys (or a refresh token) are not access tokens.
    for key in (tenant.ingest_key, tenant.admin_key, minted, refresh_token):
        answer = environments(server, key)
        assert_error(answer, 401, "invalid_token")
    # The minted key is public: it sends events, it does not read them (checklist 0.2).
    assert web.get(f"{server.url}/v1/events", headers={"Authorization": minted}).status_code == 403


# -- A1-A7: the authorize step ------------------------------------------------------------


LOOK_ALIKES = [
    "https://app.example.com.evil.com/oauth/callback",
    "https://app.example.com@evil.com/oauth/callback",
    "//evil.com/oauth/callback",
    "https:evil.com/oauth/callback",
    "javascript:alert(1)//app.example.com/oauth/callback",
    REDIRECT + "/../x",
    REDIRECT + "#f",
    REDIRECT + "/",
    REDIRECT + "?next=https://evil.com",
    REDIRECT.replace("https", "http"),
    REDIRECT.upper(),
    "",
]


@pytest.mark.parametrize("redirect", LOOK_ALIKES)
def test_a1_a_redirect_that_is_not_identical_gets_an_error_page_never_a_redirect(
    server: LiveServer, one: Installed, redirect: str
) -> None:
    url = one.browser.authorize_url(one.integration, redirect_uri=redirect)
    answer = one.browser.client.get(url)
    assert answer.status_code == 400
    assert "location" not in answer.headers
    assert "text/html" in answer.headers["content-type"]
    assert "evil" not in answer.text


@pytest.mark.parametrize(
    ("params", "status"),
    [
        ({"client_id": "nosuchclient"}, 404),  # unknown client
        ({"client_id": "a\x00b"}, 404),  # no client holds a control character
        ({"client_id": ""}, 400),  # no client named
        ({"response_type": "token", "client_id": "nosuchclient"}, 404),
    ],
)
def test_a1_an_unknown_client_gets_an_error_page(
    server: LiveServer, params: dict[str, str], status: int
) -> None:
    answer = web.get(
        f"{server.url}/oauth/authorize", params={"response_type": "code", **params, "state": "s"}
    )
    assert answer.status_code == status
    assert "location" not in answer.headers


def test_a1_duplicated_parameters_get_an_error_page(server: LiveServer, one: Installed) -> None:
    url = one.browser.authorize_url(one.integration) + f"&client_id={one.integration.client_id}"
    answer = one.browser.client.get(url)
    assert answer.status_code == 400 and "location" not in answer.headers


@pytest.mark.parametrize(
    "redirect",
    [
        "http://app.example.com/cb",  # http only for loopback
        "https://app.example.com/cb#frag",
        "https://*.example.com/cb",
        "https://user:pw@app.example.com/cb",
        "/relative/cb",
        "app.example.com/cb",
        "javascript:alert(1)",
        "https://app.example.com/a/../cb",
    ],
)
def test_a2_registration_refuses_unsafe_redirect_urls(
    server: LiveServer, tmp_path: Path, redirect: str
) -> None:
    with pytest.raises(RuntimeError, match="redirect URL"):
        register_by_cli(server, tmp_path, redirect)


def test_a2_http_is_allowed_for_loopback(server: LiveServer, tmp_path: Path) -> None:
    assert register_by_cli(server, tmp_path, "http://127.0.0.1:8976/cb").client_id


def test_a3_other_errors_go_back_with_the_unchanged_state(
    server: LiveServer, one: Installed
) -> None:
    state = "st ate/ü?&="
    url = one.browser.authorize_url(one.integration, response_type="token", state=state)
    answer = one.browser.client.get(url)
    assert answer.status_code == 303
    back = query_of(answer.headers["location"])
    assert back["error"] == "unsupported_response_type"
    assert back["state"] == state


def test_a4_consent_page_headers_csrf_and_303(server: LiveServer, one: Installed) -> None:
    page = one.browser.consent(one.browser.authorize_url(one.integration))
    csp = page.headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp
    assert "script-src" not in csp and "default-src 'none'" in csp  # no scripts at all
    assert page.headers["x-frame-options"] == "DENY"
    assert page.headers["referrer-policy"] == "no-referrer"
    assert page.headers["cache-control"] == "no-store"

    # Another login's token (valid in its own session) is as good as none here.
    stranger = Browser(server)
    stranger.login(*new_user(server, None))
    foreign = next(f for f in post_forms(stranger.client.get("/").text, "/logout"))
    for csrf in ("", "0" * 64, "é" * 64, foreign.value("csrf")):
        refused = one.browser.decide(page, csrf=csrf)
        assert refused.status_code == 403
        assert "location" not in refused.headers
    stranger.close()
    approved = one.browser.decide(page)
    assert approved.status_code == 303  # never 307: the POST must not be replayed


def test_a5_logos_are_served_as_images_and_scripts_are_refused(
    server: LiveServer, one: Installed, tmp_path: Path
) -> None:
    logo = web.get(f"{server.url}/integrations/{one.integration.client_id}/logo.svg")
    assert logo.headers["content-type"] == "image/svg+xml"
    assert "sandbox" in logo.headers["content-security-policy"]
    assert logo.headers["x-content-type-options"] == "nosniff"
    evil = tmp_path / "evil.svg"
    for svg in (
        '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
        '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>',
        '<svg xmlns="http://www.w3.org/2000/svg"><a href="javascript:alert(1)"/></svg>',
        "<html><body>not svg</body></html>",
        "<svg",
    ):
        evil.write_text(svg)
        with pytest.raises(RuntimeError, match="logo"):
            server.cli("integrations", "create", "--name", "E", "--description", "d",
                       "--logo", str(evil), "--redirect-url", REDIRECT)  # fmt: skip


def test_a6_no_granting_what_the_developer_cannot_access(
    server: LiveServer, one: Installed, other_tenant: Tenant
) -> None:
    page = one.browser.consent(one.browser.authorize_url(one.integration))
    # Tampered forms: someone else's workspace, or someone else's environment.
    # (403: not the developer's to grant; 400: the form names no environment)
    changes: tuple[tuple[dict[str, str | list[str]], int], ...] = (
        ({"workspace": other_tenant.workspace_id, "environment": other_tenant.environment_id}, 403),
        ({"environment": other_tenant.environment_id}, 403),
        ({"environment": []}, 400),
    )
    for change, status in changes:
        answer = one.browser.decide(page, "approve", **change)
        assert answer.status_code == status
        assert "location" not in answer.headers


def test_a7_without_state_the_redirect_has_no_state(server: LiveServer, one: Installed) -> None:
    url = one.browser.authorize_url(one.integration).replace("&state=xyz-123", "")
    back = query_of(one.browser.decide(one.browser.consent(url)).headers["location"])
    assert set(back) == {"code"}


# -- Secret storage (checklist 5) ---------------------------------------------------------


def test_no_secret_is_stored_in_clear(server: LiveServer, one: Installed) -> None:
    code = fresh_code(server, one)
    tokens = exchange(server, one.integration, code).json()
    stored = b"".join(p.read_bytes() for p in server.data_dir.glob("meta.db*"))
    secrets = [one.integration.client_secret, code, tokens["accessToken"], tokens["refreshToken"]]
    for value in secrets:
        assert value.encode() not in stored
    session = one.browser.client.cookies.get("ll_session")
    assert session and session.encode() not in stored


# -- T11: brute force ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def strict_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    srv = launch(
        tmp_path_factory.mktemp("strict"),
        {
            "LIMELIGHT_AUTH_FAILURES_PER_ACCOUNT": "3",
            "LIMELIGHT_AUTH_FAILURES_PER_IP": "8",
            # Windows are aligned on the clock: a day-long one ends at midnight UTC,
            # which a test may cross; this one ends in 2033.
            "LIMELIGHT_AUTH_FAILURE_WINDOW": str(NO_BOUNDARY_BEFORE_2033),
        },
    )
    yield srv
    srv.stop()


def test_t11_failed_authentications_are_rate_limited(
    strict_server: LiveServer, tmp_path: Path
) -> None:
    srv = strict_server
    integration = register(srv, tmp_path)
    wrong = body(integration, clientSecret="ll_cs_guess")
    # Per client: three failures, then 429 even for the right secret until the window ends.
    assert [token_post(srv, json=wrong).status_code for _ in range(3)] == [401] * 3
    limited = token_post(srv, json=wrong)
    assert_error(limited, 429, "temporarily_unavailable")
    assert int(limited.headers["retry-after"]) >= 1
    assert token_post(srv, json=body(integration)).status_code == 429

    # Per account on the login form.
    email, _ = new_user(srv)
    browser = Browser(srv)
    assert [browser.login(email, "wrong password!").status_code for _ in range(3)] == [401] * 3
    blocked = browser.login(email, "wrong password!")
    assert blocked.status_code == 429 and int(blocked.headers["retry-after"]) >= 1

    # Per address: six failures so far; two more on fresh accounts reach the limit of 8.
    for n in range(2):
        assert browser.login(f"nobody{n}@example.com", "wrong password!").status_code == 401
    other = register(srv, tmp_path)
    assert token_post(srv, json=body(other, clientSecret="ll_cs_x")).status_code == 429
    browser.close()
