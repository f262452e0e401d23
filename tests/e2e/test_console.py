"""The console: login, session cookie, CSRF, and the workspaces page."""

from __future__ import annotations

import httpx

from tests import web
from tests.e2e.oauth_support import Browser, new_user, post_forms, query_of
from tests.support import LiveServer, Tenant, run_cli


def set_cookie(response: httpx.Response, name: str) -> str:
    return next(v for v in response.headers.get_list("set-cookie") if v.startswith(name + "="))


def test_login_sets_an_httponly_samesite_lax_session_cookie(
    server: LiveServer, tenant: Tenant
) -> None:
    email, password = new_user(server, tenant.workspace_id)
    browser = Browser(server)
    answer = browser.login(email, password)
    assert answer.status_code == 303 and answer.headers["location"] == "/"
    cookie = set_cookie(answer, "ll_session").lower()
    assert "httponly" in cookie and "samesite=lax" in cookie and "path=/" in cookie
    assert "secure" not in cookie  # plain http here: a Secure cookie would never come back
    assert browser.client.get("/").status_code == 200
    browser.close()


def test_behind_an_https_proxy_the_cookie_is_secure(server: LiveServer, tenant: Tenant) -> None:
    email, password = new_user(server, tenant.workspace_id)
    client = web.Client(base_url=server.url, headers={"X-Forwarded-Proto": "https"})
    page = client.get("/login")
    form = post_forms(page.text, "/login")[0]
    # The pre-login cookie is Secure as well; httpx keeps it back over plain http, so it
    # is passed by hand, as a browser talking https to the proxy would send it.
    pre_login = set_cookie(page, "ll_login")
    assert "; secure" in pre_login.lower()
    client.cookies.set("ll_login", pre_login.split(";")[0].split("=", 1)[1])
    answer = client.post("/login", data=dict(form.fields) | {"email": email, "password": password})
    assert answer.status_code == 303
    assert "; secure" in set_cookie(answer, "ll_session").lower()
    client.close()


def test_wrong_password_and_unknown_email_look_the_same(server: LiveServer, tenant: Tenant) -> None:
    email, _ = new_user(server, tenant.workspace_id)
    browser = Browser(server)
    for who in (email, "nobody-at-all@example.com"):
        answer = browser.login(who, "not the password")
        assert answer.status_code == 401
        assert "Wrong email or password." in answer.text
        assert "ll_session" not in answer.headers.get("set-cookie", "")
    assert browser.client.get("/").status_code == 303
    browser.close()


def test_login_and_logout_forms_refuse_a_missing_or_wrong_csrf_token(
    server: LiveServer, tenant: Tenant
) -> None:
    email, password = new_user(server, tenant.workspace_id)
    browser = Browser(server)
    page = browser.client.get("/login")
    assert "<title>Log in · Limelight</title>" in page.text
    fields = dict(post_forms(page.text, "/login")[0].fields)
    # A token with a character past ASCII is a wrong token too, not a 500.
    for csrf in ("", "f" * 64, "é" * 64):
        answer = browser.client.post(
            "/login", data=fields | {"csrf": csrf, "email": email, "password": password}
        )
        assert answer.status_code == 403
        assert "ll_session" not in answer.headers.get("set-cookie", "")
    # A token is bound to its own pre-login cookie: another browser's token fails.
    other = Browser(server)
    other_page = other.client.get("/login")
    other_fields = dict(post_forms(other_page.text, "/login")[0].fields)
    answer = browser.client.post(
        "/login", data=other_fields | {"email": email, "password": password}
    )
    assert answer.status_code == 403
    other.close()

    assert browser.login(email, password).status_code == 303
    refused = browser.client.post("/logout", data={"csrf": "nope"})
    assert refused.status_code == 403
    assert browser.client.get("/").status_code == 200  # still logged in
    home = browser.client.get("/")
    logout = post_forms(home.text, "/logout")[0]
    old_cookie = browser.client.cookies.get("ll_session")
    assert browser.client.post("/logout", data=dict(logout.fields)).status_code == 303
    # The session is gone on the server, not only from the browser.
    replay = web.get(f"{server.url}/", cookies={"ll_session": old_cookie or ""})
    assert replay.status_code == 303 and replay.headers["location"].startswith("/login")
    browser.close()


def test_the_workspaces_page_lists_the_users_workspaces_environments_and_ingest_keys(
    server: LiveServer, tenant: Tenant, other_tenant: Tenant
) -> None:
    email, password = new_user(server, tenant.workspace_id)
    browser = Browser(server)
    browser.login(email, password)
    page = browser.client.get("/")
    assert page.status_code == 200
    assert page.headers["cache-control"] == "no-store"
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert tenant.workspace_id in page.text
    assert tenant.environment_id in page.text
    assert tenant.ingest_key in page.text
    assert tenant.admin_key not in page.text  # secret keys are never shown again
    # Nothing of a workspace the user is not a member of.
    assert other_tenant.workspace_id not in page.text
    assert other_tenant.ingest_key not in page.text

    server.cli("users", "add-to-workspace", email, other_tenant.workspace_id)
    assert other_tenant.ingest_key in browser.client.get("/").text
    browser.close()


def test_login_only_returns_to_pages_of_this_server(server: LiveServer, tenant: Tenant) -> None:
    email, password = new_user(server, tenant.workspace_id)
    for target in ("//evil.com/x", "https://evil.com/", "/\\evil.com", "javascript:alert(1)"):
        browser = Browser(server)
        answer = browser.login(email, password, next_url=target)
        assert answer.status_code == 303
        assert answer.headers["location"] == "/"
        browser.close()


def test_pages_need_a_login(server: LiveServer) -> None:
    home = web.get(f"{server.url}/")
    assert home.status_code == 303
    assert query_of(home.headers["location"]) == {"next": "/"}
    forged = web.post(f"{server.url}/installations/abc/uninstall", data={"csrf": "x"})
    assert forged.status_code == 303 and forged.headers["location"].startswith("/login")


def test_a_lost_password_is_replaced_from_the_command_line_and_ends_the_sessions(
    server: LiveServer, tenant: Tenant
) -> None:
    email, password = new_user(server, tenant.workspace_id)
    browser = Browser(server)
    assert browser.login(email, password).status_code == 303
    assert browser.client.get("/").status_code == 200

    out = run_cli(["users", "set-password", email], server.env)
    assert out.returncode == 0, out.stderr
    new_password = out.stdout.strip().rsplit(": ", 1)[1]
    assert "ended 1 console session" in out.stderr
    assert browser.client.get("/").status_code == 303  # to the login page: the session ended
    assert Browser(server).login(email, password).status_code != 303
    assert Browser(server).login(email, new_password).status_code == 303

    chosen = "a chosen passphrase, long enough"
    given = run_cli(["users", "set-password", email, "--password-stdin"], server.env, chosen)
    assert given.returncode == 0 and chosen not in given.stdout
    assert Browser(server).login(email, chosen).status_code == 303
    weak = run_cli(["users", "set-password", email, "--password-stdin"], server.env, "short")
    assert weak.returncode == 1 and "Traceback" not in weak.stderr
    browser.close()
