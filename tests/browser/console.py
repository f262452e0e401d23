"""A person at the console: a browser page, the server and workspace it looks at."""

from __future__ import annotations

import os
from pathlib import Path

from playwright.sync_api import ConsoleMessage, Page, Response, expect

from tests.support import LiveServer, Tenant

WAIT_MS = 20_000
# The README's screenshots: what the window shows (1280 px wide), written where
# `make screenshots` says (docs/screenshots), and only then.
README_SHOTS = os.environ.get("LIMELIGHT_README_SCREENSHOTS")


class Console:
    def __init__(self, server: LiveServer, tenant: Tenant, page: Page, shots: Path | None) -> None:
        self.server = server
        self.tenant = tenant
        self.page = page
        self.shots = shots
        self.problems: list[str] = []
        page.set_default_timeout(WAIT_MS)
        expect.set_options(timeout=WAIT_MS)
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.problems.append(f"script error: {error}"))

    def _console(self, message: ConsoleMessage) -> None:
        # A CSP violation (an inline script or style) is reported here as an error.
        if message.type == "error":
            self.problems.append(f"console error on {self.page.url}: {message.text}")

    @property
    def base(self) -> str:
        return f"/env/{self.tenant.environment_id}"

    def log_in(self, email: str, password: str) -> None:
        self.page.goto(f"{self.server.url}/login")
        self.page.get_by_label("Email").fill(email)
        self.page.get_by_label("Password").fill(password)
        self.page.get_by_role("button", name="Log in").click()
        expect(self.page.get_by_role("heading", name="Your workspaces")).to_be_visible()

    def open(self, path: str) -> Response:
        answer = self.page.goto(self.server.url + path)
        assert answer is not None
        return answer

    def shot(self, name: str, readme: bool = False) -> None:
        """The page as it looks now, in LIMELIGHT_SCREENSHOTS (when set) and, for the
        README's, in LIMELIGHT_README_SCREENSHOTS."""
        if self.shots is not None:
            self.page.screenshot(path=self.shots / f"{name}.png", full_page=True)
        if readme and README_SHOTS:
            folder = Path(README_SHOTS)
            folder.mkdir(parents=True, exist_ok=True)
            self.page.screenshot(path=folder / f"{name}.png")

    def assert_no_page_errors(self) -> None:
        assert self.problems == []
