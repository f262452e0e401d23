"""Rendering console pages: Jinja2 with autoescaping, and the headers every page carries."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse

from limelight.console.event_lines import summary
from limelight.settings import Settings

HERE = Path(__file__).parent
# Marks that reorder the text around them (embeddings, overrides, isolates): in a key's
# name they make a line read other than it is ("evil\u202etxt.exe" shows as
# "evilexe.txt"). The lists of names show them as their codes (the ``shown`` filter), as
# the command line does; never a form's value, which would send the codes back as the name.
_REORDERING = re.compile("[\u202a-\u202e\u2066-\u2069]")


def shown_marks(value: Any) -> Any:
    """Text with its reordering marks shown as their codes; anything else as it is."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return _REORDERING.sub(lambda m: f"\\u{ord(m.group()):04x}", value)
    return value


templates = Environment(
    loader=FileSystemLoader(HERE / "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
)


def utc_text(ms: int | None) -> str:
    """A time as the page shows it before its script puts it in the browser's zone."""
    if ms is None:
        return ""
    try:
        moment = datetime.fromtimestamp(ms / 1000, UTC)
    except (OverflowError, OSError, ValueError):  # a time no calendar here can show
        return ""
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def query_string(params: Any) -> str:
    """``?a=1&b=2`` from a mapping or pairs, leaving out empty values; '' when none."""
    pairs = params.items() if hasattr(params, "items") else params
    kept = [(k, v) for k, v in pairs if v not in (None, "")]
    return "?" + urlencode(kept) if kept else ""


def number_text(value: float | None) -> str:
    """A number as the pages' scripts write one (charts.js ``formatNumber``, en-US):
    integers with thousands separators, other numbers with at most three decimals, in
    exponent form far from 1; a missing one as a dash."""
    if value is None or value != value:  # noqa: PLR0124 - NaN
        return "—"
    if isinstance(value, int) or value.is_integer():
        return f"{int(value):,}"
    size = abs(value)
    if size < 0.001 or size >= 1e15:
        mantissa, exponent = f"{value:.3e}".split("e")
        return f"{mantissa}e{int(exponent)}"
    return f"{value:,.3f}".rstrip("0").rstrip(".")


def duration_text(value: float | None) -> str:
    return "—" if value is None else f"{number_text(value)} ms"


def rate_text(value: float | None) -> str:
    """A share (0 to 1) as a percentage."""
    return "—" if value is None else f"{number_text(round(value * 100, 3))}%"


templates.filters["utc"] = utc_text
templates.filters["shown"] = shown_marks
templates.filters["number"] = number_text
templates.filters["ms"] = duration_text
templates.filters["rate"] = rate_text
templates.filters["summary"] = summary
templates.filters["qs"] = query_string
templates.filters["thousands"] = lambda n: f"{n:,}" if isinstance(n, int) else n


def page_headers(form_target: str | None = None, scripts: bool = True) -> dict[str, str]:
    """No framing (clickjacking a consent button), no referrer (codes and states in
    URLs), no caching, and scripts and styles only from files this server serves: no
    inline script, no event handler attribute, no inline style. Pages that need no
    script (login, consent, errors) allow none at all. ``form_target`` is the one
    other origin a form may lead to: browsers apply form-action to the redirect
    after a POST."""
    form_action = "'self'" + (f" {form_target}" if form_target else "")
    script = "script-src 'self'; connect-src 'self'; " if scripts else ""
    csp = (
        f"default-src 'none'; {script}style-src 'self'; img-src 'self'; "
        f"form-action {form_action}; frame-ancestors 'none'; base-uri 'none'"
    )
    return {
        "Content-Security-Policy": csp,
        "X-Frame-Options": "DENY",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
        "X-Content-Type-Options": "nosniff",
    }


def render(
    name: str,
    status: int = 200,
    form_target: str | None = None,
    scripts: bool = True,
    **context: Any,
) -> HTMLResponse:
    html = templates.get_template(name).render(scripts=scripts, **context)
    return HTMLResponse(html, status_code=status, headers=page_headers(form_target, scripts))


def error_page(
    message: str, status: int = 400, errors: list[Any] | None = None, **headers: str
) -> HTMLResponse:
    response = render(
        "error.html", status, scripts=False, message=message, errors=errors or [], user=None
    )
    response.headers.update(headers)
    return response


def see_other(url: str) -> RedirectResponse:
    """303: after a POST the browser must GET the next page (RFC 9700 4.12; never 307)."""
    response = RedirectResponse(url, status_code=303)
    response.headers.update({"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"})
    return response


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def is_https(request: Request, settings: Settings) -> bool:
    """Whether cookies get the Secure flag: behind a TLS-terminating proxy the request
    itself is http, so X-Forwarded-Proto counts too. A forged header only makes the
    cookie stricter for whoever forged it."""
    if settings.secure_cookies != "auto":
        return settings.secure_cookies == "always"
    forwarded = request.headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
    return (
        request.url.scheme == "https"
        or forwarded == "https"
        or settings.base_url.startswith("https://")
    )


def safe_next(value: str | None) -> str:
    """Only a path on this server: never an open redirect to somewhere else."""
    if not value or not value.startswith("/") or value.startswith(("//", "/\\")):
        return "/"
    if any(c in value for c in "\\\r\n\t") or urlsplit(value).netloc:
        return "/"
    return value
