"""Integration logos: a well-formed SVG of reasonable size, with nothing active in it.

The logo is only ever served as ``image/svg+xml`` from its own URL and shown
through ``<img>`` (where scripts never run), with a CSP that forbids scripts if
someone opens it directly. Refusing scripts, event handlers, foreign objects
and external references at registration is a second line of defence.
"""

from __future__ import annotations

import re
from xml.etree.ElementTree import Element

from defusedxml import ElementTree as SafeET
from defusedxml.common import DefusedXmlException

MAX_BYTES = 64 * 1024
SVG_NS = "{http://www.w3.org/2000/svg}"
FORBIDDEN_TAGS = {"script", "foreignobject", "iframe", "embed", "object", "handler", "listener"}
HREF_OK = re.compile(r"^(#|data:image/(png|jpeg|gif|webp);base64,)", re.IGNORECASE)


class BadLogo(ValueError):
    pass


def _local(name: str) -> str:
    return name.rsplit("}", 1)[-1].lower()


def _check_element(el: Element) -> None:
    tag = _local(el.tag)
    if tag in FORBIDDEN_TAGS:
        raise BadLogo(f"an SVG logo may not contain <{tag}>")
    for name, value in el.attrib.items():
        attr = _local(name)
        if attr.startswith("on"):
            raise BadLogo(f"an SVG logo may not have event handlers ({attr})")
        if attr == "href" and not HREF_OK.match(value.strip()):
            raise BadLogo("an SVG logo may only link to its own elements or embedded images")
        if "javascript:" in value.lower() or "url(http" in value.lower().replace(" ", ""):
            raise BadLogo("an SVG logo may not reference scripts or external resources")


def check_svg(data: bytes) -> str:
    """The SVG text if it may be used as a logo, else ``BadLogo`` saying why."""
    if not data:
        raise BadLogo("the logo file is empty")
    if len(data) > MAX_BYTES:
        raise BadLogo(f"an SVG logo is at most {MAX_BYTES // 1024} KiB")
    try:
        text = data.decode("utf-8")
        root = SafeET.fromstring(text, forbid_dtd=True)  # no entities, no DTD tricks
    except (UnicodeDecodeError, SafeET.ParseError, DefusedXmlException) as exc:
        raise BadLogo(f"the logo is not a well-formed SVG file: {exc}") from exc
    if root.tag not in (f"{SVG_NS}svg", "svg"):
        raise BadLogo("the logo's root element must be <svg>")
    for el in root.iter():
        _check_element(el)
    return text
