"""Helpers for the OAuth tests: a browser that reads forms, and an integration's calls."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx

from limelight.auth.oauth.logo import check_svg
from limelight.auth.oauth.redirects import check_registration
from limelight.auth.passwords import hash_password
from limelight.auth.secrets import SecretKind, display, hash_secret, new_secret
from limelight.store.meta import accounts_repo as accounts
from limelight.store.meta import oauth_repo, repos
from limelight.store.meta.models import utcnow
from tests import web
from tests.support import LiveServer

LOGO = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10">'
    '<circle cx="5" cy="5" r="4" fill="#2f6fed"/></svg>'
)
REDIRECT = "https://app.example.com/oauth/callback"


@dataclass
class Form:
    action: str
    method: str
    fields: list[tuple[str, str]] = field(default_factory=list)
    buttons: list[tuple[str, str]] = field(default_factory=list)

    def value(self, name: str) -> str | None:
        return next((v for k, v in self.fields if k == name), None)


class _FormParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.forms: list[Form] = []
        self.images: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.forms.append(Form(a.get("action", ""), a.get("method", "get").lower()))
        elif tag == "img":
            self.images.append(a.get("src", ""))
        elif tag == "input" and self.forms and "name" in a:
            kind = a.get("type", "text")
            if kind in ("checkbox", "radio") and "checked" not in a:
                return
            self.forms[-1].fields.append((a["name"], a.get("value", "")))
        elif tag == "button" and self.forms and "name" in a:
            self.forms[-1].buttons.append((a["name"], a.get("value", "")))


def parse_page(html: str) -> _FormParser:
    parser = _FormParser()
    parser.feed(html)
    return parser


def post_forms(html: str, action: str) -> list[Form]:
    return [f for f in parse_page(html).forms if f.method == "post" and f.action == action]


def query_of(location: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


@dataclass
class Integration:
    client_id: str
    client_secret: str
    redirect: str
    name: str


def register(server: LiveServer, tmp: Path, redirect: str = REDIRECT) -> Integration:
    """An integration registered as ``limelight integrations create`` does it."""
    del tmp  # the logo is checked in memory; the CLI's own tests read it from a file
    name = f"App {uuid.uuid4().hex[:6]}"
    secret = new_secret(SecretKind.CLIENT_SECRET)
    with server.meta.session(immediate=True) as s:
        integration = oauth_repo.create_integration(
            s,
            name=name,
            description="Dashboards for your events",
            logo_svg=check_svg(LOGO.encode()),
            redirect_url=check_registration(redirect),
            secret_hash=hash_secret(secret),
            secret_display=display(secret),
            now=utcnow(),
        )
        return Integration(integration.id, secret, redirect, name)


def register_by_cli(server: LiveServer, tmp: Path, redirect: str = REDIRECT) -> Integration:
    """An integration registered through ``limelight integrations create`` itself."""
    logo = tmp / f"logo-{uuid.uuid4().hex[:6]}.svg"
    logo.write_text(LOGO)
    name = f"App {uuid.uuid4().hex[:6]}"
    out = server.cli_json(
        "integrations", "create", "--name", name, "--description", "Dashboards for your events",
        "--logo", str(logo), "--redirect-url", redirect,
    )  # fmt: skip
    return Integration(out["clientId"], out["clientSecret"], redirect, name)


def new_user(server: LiveServer, workspace_id: str | None = None) -> tuple[str, str]:
    """A user (and, with ``workspace_id``, a member of it), as ``limelight users create``."""
    email = f"dev-{uuid.uuid4().hex[:8]}@example.com"
    password = f"pw-{uuid.uuid4().hex}"
    with server.meta.session(immediate=True) as s:
        user = accounts.create_user(s, email, hash_password(password), utcnow())
        if workspace_id:
            accounts.add_member(s, user, repos.find_workspace(s, workspace_id), utcnow())
    return email, password


class Browser:
    """A cookie jar and a form filler; redirects are followed by hand to look at them."""

    def __init__(self, server: LiveServer) -> None:
        self.client = web.Client(base_url=server.url, follow_redirects=False, timeout=30)

    def close(self) -> None:
        self.client.close()

    def login(self, email: str, password: str, next_url: str = "/") -> httpx.Response:
        page = self.client.get("/login", params={"next": next_url})
        form = post_forms(page.text, "/login")[0]
        data = dict(form.fields) | {"email": email, "password": password}
        return self.client.post("/login", data=data)

    def authorize_url(self, integration: Integration, **extra: str) -> str:
        params = {"response_type": "code", "client_id": integration.client_id}
        params |= {"redirect_uri": integration.redirect, "state": "xyz-123"} | extra
        return "/oauth/authorize?" + urlencode(params)

    def consent(self, url: str) -> httpx.Response:
        page = self.client.get(url)
        assert page.status_code == 200, page.text
        return page

    def decide(
        self, page: httpx.Response, decision: str = "approve", **change: Any
    ) -> httpx.Response:
        form = next(f for f in post_forms(page.text, "/oauth/authorize") if f.buttons)
        data: dict[str, list[str]] = {}
        for k, v in form.fields:
            if k not in change:
                data.setdefault(k, []).append(v)
        for k, v in change.items():
            data[k] = v if isinstance(v, list) else [v]
        data["decision"] = [decision]
        return self.client.post("/oauth/authorize", data=data)

    def install(self, integration: Integration, **extra: str) -> dict[str, str]:
        """Approve on the consent page; the query of the redirect (code and state)."""
        answer = self.decide(self.consent(self.authorize_url(integration, **extra)))
        assert answer.status_code == 303, answer.text
        location = answer.headers["location"]
        assert location.startswith(integration.redirect + "?")
        return query_of(location)


def exchange(
    server: LiveServer, integration: Integration, code: str, **extra: str
) -> httpx.Response:
    body = {
        "grantType": "authorization_code",
        "clientId": integration.client_id,
        "clientSecret": integration.client_secret,
        "redirect": integration.redirect,
        "code": code,
    } | extra
    return web.post(f"{server.url}/oauth/token", json=body, timeout=30)


def refresh(server: LiveServer, integration: Integration, token: str) -> httpx.Response:
    body = {
        "grantType": "refresh_token",
        "clientId": integration.client_id,
        "clientSecret": integration.client_secret,
        "redirect": integration.redirect,
        "refreshToken": token,
    }
    return web.post(f"{server.url}/oauth/token", json=body, timeout=30)


def environments(server: LiveServer, access_token: str) -> httpx.Response:
    return web.get(
        f"{server.url}/oauth/environments",
        headers={"Authorization": f"Bearer {access_token}", "Content-Type": "application/json"},
        timeout=30,
    )


@dataclass
class Installed:
    integration: Integration
    browser: Browser
    tokens: dict[str, Any]
    email: str


def installed(server: LiveServer, tmp: Path, workspace_id: str) -> Installed:
    """An integration installed by a fresh user on ``workspace_id``, code exchanged."""
    integration = register(server, tmp)
    email, password = new_user(server, workspace_id)
    browser = Browser(server)
    assert browser.login(email, password).status_code == 303
    code = browser.install(integration)["code"]
    answer = exchange(server, integration, code)
    assert answer.status_code == 200, answer.text
    return Installed(integration, browser, answer.json(), email)
