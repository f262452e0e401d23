"""Browser tests of the console: Playwright driving the system's chromium.

Playwright's own browser download is not used: ``LIMELIGHT_CHROMIUM``, else the
first of ``CHROMIUM_NAMES`` on the PATH, is launched. Without one these tests are
skipped, saying so; ``.ci/run`` installs one first, so CI always runs them.

Every page a test opens is saved as a screenshot in ``LIMELIGHT_SCREENSHOTS``
when it names a folder (``make screenshots`` refreshes the README's). Not by
default: the full-page screenshots cost the browser 3 s of CPU per run of the suite.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, sync_playwright

from tests.browser.console import Console
from tests.e2e.oauth_support import new_user
from tests.support import LiveServer, unavailable

# The headless shell first (Debian's chromium-headless-shell, the build Playwright
# itself runs headless): the same engine without the full browser's windowing and
# compositor. The suite's browser tests, side by side in one run: 19.9 s of browser
# CPU against 46.5 s with the full chromium (45 s against 57 s of wall time).
CHROMIUM_NAMES = ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]


def chromium_path() -> str | None:
    if named := os.environ.get("LIMELIGHT_CHROMIUM"):
        return named if Path(named).is_file() else None
    return next((found for name in CHROMIUM_NAMES if (found := shutil.which(name))), None)


# Per module, not per session: a sync Playwright keeps an event loop running in the
# test thread while it lives, and later tests on the same worker that run a loop of
# their own (the alert notifier's asyncio.run) would fail beside it.
@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    path = chromium_path()
    if path is None:
        unavailable(
            "no chromium to drive: install one (apt-get install chromium-headless-shell) or "
            "set LIMELIGHT_CHROMIUM to its executable; the console's browser tests need one"
        )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def screenshots() -> Path | None:
    if not (named := os.environ.get("LIMELIGHT_SCREENSHOTS")):
        return None
    folder = Path(named)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture()
def console(chromium: Browser, server: LiveServer, screenshots: Path | None) -> Iterator[Console]:
    """A signed-in member of a new workspace, in a browser window of 1280 px."""
    tenant = server.new_tenant()
    email, password = new_user(server, tenant.workspace_id)
    context = chromium.new_context(viewport={"width": 1280, "height": 800})
    window = Console(server, tenant, context.new_page(), screenshots)
    window.log_in(email, password)
    yield window
    context.close()
    window.assert_no_page_errors()
