"""The whole install story, as a browser and an integration see it (api-spec 4.1-4.3, 5)."""

from __future__ import annotations

from pathlib import Path

from authlib.integrations.httpx_client import OAuth2Client

from tests import web
from tests.e2e.oauth_support import (
    Browser,
    environments,
    exchange,
    installed,
    new_user,
    parse_page,
    post_forms,
    query_of,
    refresh,
    register,
)
from tests.support import LiveServer, Tenant


def test_install_exchange_use_refresh_uninstall(
    server: LiveServer, tenant: Tenant, tmp_path: Path
) -> None:
    # The operator registers the integration and a developer account.
    integration = register(server, tmp_path)
    assert integration.client_secret.startswith("ll_cs_")
    email, password = new_user(server, tenant.workspace_id)
    browser = Browser(server)

    # Not logged in: the authorize link leads to the login page and back.
    url = browser.authorize_url(integration)
    first = browser.client.get(url)
    assert first.status_code == 303
    login_at = first.headers["location"]
    assert login_at.startswith("/login?")
    assert query_of(login_at)["next"] == url
    logged_in = browser.login(email, password, next_url=query_of(login_at)["next"])
    assert logged_in.status_code == 303
    assert logged_in.headers["location"] == url

    # The consent page names the integration and where the browser will go.
    page = browser.consent(url)
    assert integration.name in page.text
    assert "Dashboards for your events" in page.text
    assert "app.example.com" in page.text
    logo_url = f"/integrations/{integration.client_id}/logo.svg"
    assert logo_url in parse_page(page.text).images
    assert "<svg" not in page.text  # shown through <img>, never inlined
    logo = browser.client.get(logo_url)
    assert logo.status_code == 200
    assert logo.headers["content-type"] == "image/svg+xml"

    # Approve (with the form's CSRF token): back to the integration with code and state.
    answer = browser.decide(page)
    assert answer.status_code == 303
    back = query_of(answer.headers["location"])
    assert answer.headers["location"].startswith(integration.redirect + "?")
    assert back["state"] == "xyz-123"
    assert back["code"].startswith("ll_ac_")

    # The integration exchanges the code.
    tokens = exchange(server, integration, back["code"])
    assert tokens.status_code == 200, tokens.text
    assert tokens.headers["cache-control"] == "no-store"
    body = tokens.json()
    assert set(body) == {"accessToken", "refreshToken", "expiresIn", "tokenType"}
    assert body["expiresIn"] == 86400
    assert body["tokenType"] == "Bearer"

    # ... lists the granted environments, each with a public key of its own ...
    envs = environments(server, body["accessToken"])
    assert envs.status_code == 200
    assert envs.headers["cache-control"] == "no-store"
    listed = envs.json()
    assert [(e["workspaceId"], e["environmentId"]) for e in listed] == [
        (tenant.workspace_id, tenant.environment_id)
    ]
    api_key = listed[0]["apiKey"]
    assert api_key.startswith("ll_pk_") and api_key != tenant.ingest_key
    assert environments(server, body["accessToken"]).json() == listed  # the same key again

    # ... and sends events with that key, which land in the granted environment.
    sent = server.send(api_key, "from-integration", [{"message": "hi from the app"}])
    assert sent.status_code == 202
    stored = web.get(
        f"{server.url}/v1/events",
        params={"dataset": "from-integration"},
        headers={"Authorization": tenant.admin_key},
    ).json()["events"]
    assert [e["message"] for e in stored] == ["hi from the app"]

    # A refresh gives a new access token, and no new refresh token.
    renewed = refresh(server, integration, body["refreshToken"])
    assert renewed.status_code == 200, renewed.text
    assert set(renewed.json()) == {"accessToken", "expiresIn", "tokenType"}
    assert renewed.json()["expiresIn"] == 86400
    new_access = renewed.json()["accessToken"]
    assert new_access != body["accessToken"]
    assert environments(server, new_access).json() == listed

    # The developer uninstalls it from the console.
    home = browser.client.get("/")
    assert integration.name in home.text
    [form] = [f for f in parse_page(home.text).forms if f.action.endswith("/uninstall")]
    gone = browser.client.post(form.action, data=dict(form.fields))
    assert gone.status_code == 303
    assert integration.name not in browser.client.get("/").text

    # Every credential it held is refused from now on.
    for token in (body["accessToken"], new_access):
        refused = environments(server, token)
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"].startswith("Bearer")
    again = refresh(server, integration, body["refreshToken"])
    assert again.status_code == 400
    assert again.json()["error"] == "invalid_grant"
    assert server.send(api_key, "from-integration", [{"message": "x"}]).status_code == 401
    assert server.send(tenant.ingest_key, "other", [{"message": "x"}]).status_code == 202
    browser.close()


def test_a_standard_oauth_client_works_with_form_bodies_and_basic_auth(
    server: LiveServer, tenant: Tenant, tmp_path: Path
) -> None:
    """Authlib's httpx client (client_secret_basic, form-encoded, PKCE S256)."""
    integration = register(server, tmp_path)
    email, password = new_user(server, tenant.workspace_id)
    browser = Browser(server)
    browser.login(email, password)
    client = OAuth2Client(
        integration.client_id,
        integration.client_secret,
        token_endpoint_auth_method="client_secret_basic",
        redirect_uri=integration.redirect,
        code_challenge_method="S256",
    )
    verifier = "v" * 30 + "-._~" + "w" * 30
    url, state = client.create_authorization_url(
        f"{server.url}/oauth/authorize", code_verifier=verifier
    )
    page = browser.consent(url.removeprefix(server.url))
    location = browser.decide(page).headers["location"]
    assert query_of(location)["state"] == state

    token = client.fetch_token(
        f"{server.url}/oauth/token", authorization_response=location, code_verifier=verifier
    )
    assert token["token_type"] == "Bearer"
    assert token["expires_in"] == 86400
    assert token["refresh_token"].startswith("ll_rt_")
    assert environments(server, token["access_token"]).status_code == 200

    renewed = client.refresh_token(f"{server.url}/oauth/token", token["refresh_token"])
    assert renewed["access_token"] != token["access_token"]
    assert environments(server, renewed["access_token"]).status_code == 200

    # RFC 7009: revoking the refresh token also ends the access tokens made from it.
    revoked = client.revoke_token(f"{server.url}/oauth/revoke", token["refresh_token"])
    assert revoked.status_code == 200
    assert environments(server, renewed["access_token"]).status_code == 401
    browser.close()


def test_cli_uninstall_and_delete_revoke_tokens_and_keys_at_once(
    server: LiveServer, tenant: Tenant, tmp_path: Path
) -> None:
    one = installed(server, tmp_path, tenant.workspace_id)
    key = environments(server, one.tokens["accessToken"]).json()[0]["apiKey"]
    assert server.send(key, "logs", [{"n": 1}]).status_code == 202
    shown = server.cli_json("integrations", "show", one.integration.client_id)
    assert shown["installations"] == 1 and "ll_cs_" in shown["clientSecret"]
    assert one.integration.client_secret not in str(shown)  # the secret is shown once only

    server.cli("integrations", "uninstall", one.integration.client_id, "--user", one.email)
    assert environments(server, one.tokens["accessToken"]).status_code == 401
    assert server.send(key, "logs", [{"n": 2}]).status_code == 401

    two = installed(server, tmp_path, tenant.workspace_id)
    key = environments(server, two.tokens["accessToken"]).json()[0]["apiKey"]
    server.cli("integrations", "delete", two.integration.client_id)
    assert environments(server, two.tokens["accessToken"]).status_code == 401
    assert server.send(key, "logs", [{"n": 3}]).status_code == 401
    gone = refresh(server, two.integration, two.tokens["refreshToken"])
    assert gone.status_code == 401 and gone.json()["error"] == "invalid_client"


def test_delete_counts_the_installations_show_counted(
    server: LiveServer, tenant: Tenant, tmp_path: Path
) -> None:
    """Installations uninstalled before are not revoked again, nor counted."""
    one = installed(server, tmp_path, tenant.workspace_id)
    client_id = one.integration.client_id
    server.cli("integrations", "uninstall", client_id)
    assert server.cli_json("integrations", "show", client_id)["installations"] == 0
    said = server.cli("integrations", "delete", client_id)
    assert f"deleted integration {client_id} (0 active installations revoked)" in said


def test_rotating_the_secret_refuses_the_old_secret_and_the_tokens(
    server: LiveServer, tenant: Tenant, tmp_path: Path
) -> None:
    one = installed(server, tmp_path, tenant.workspace_id)
    key = environments(server, one.tokens["accessToken"]).json()[0]["apiKey"]
    rotated = server.cli_json("integrations", "rotate-secret", one.integration.client_id)
    assert rotated["clientSecret"] != one.integration.client_secret
    old = refresh(server, one.integration, one.tokens["refreshToken"])
    assert old.status_code == 401 and old.json()["error"] == "invalid_client"
    assert environments(server, one.tokens["accessToken"]).status_code == 401
    # The installation and its key stay: only the tokens went.
    assert server.send(key, "logs", [{"n": 1}]).status_code == 202
    one.integration.client_secret = rotated["clientSecret"]
    code = one.browser.install(one.integration)["code"]
    assert exchange(server, one.integration, code).status_code == 200


def test_deny_sends_access_denied_with_the_state(
    server: LiveServer, tenant: Tenant, tmp_path: Path
) -> None:
    integration = register(server, tmp_path)
    email, password = new_user(server, tenant.workspace_id)
    browser = Browser(server)
    browser.login(email, password)
    page = browser.consent(browser.authorize_url(integration))
    answer = browser.decide(page, "deny")
    assert answer.status_code == 303
    assert query_of(answer.headers["location"]) == {
        "error": "access_denied",
        "error_description": "the developer declined",
        "state": "xyz-123",
    }
    assert post_forms(page.text, "/oauth/authorize")
