"""Integration logos: a well-formed SVG of reasonable size, with nothing active in it.

The logo is only ever served as ``image/svg+xml`` from its own URL and shown
through ``<img>`` (where scripts never run), with a CSP that forbids scripts if
someone opens it directly. Checking it at registration is a second line of
defence, so it is an allow-list: a deny-list of dangerous names missed
animation elements that set an ``href`` to an entity-obfuscated
``javascript:`` URL and CSS that loads other documents. What a logo may hold:
shapes, paths, text, groups, gradients, patterns, clips, masks, markers, a few
filter primitives, and ``use`` of its own elements; no ``style`` (attribute or
element), no animation, and no reference outside the document except an
embedded raster image.
"""

from __future__ import annotations

import re
from xml.etree.ElementTree import Element, TreeBuilder

from defusedxml import ElementTree as SafeET
from defusedxml.common import DefusedXmlException

from limelight.errors import InvalidValue
from limelight.store.meta import oauth_repo
from limelight.store.meta.db import MetaDB

MAX_BYTES = 64 * 1024
SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
XML_NS = "http://www.w3.org/XML/1998/namespace"


def _names(words: str) -> frozenset[str]:
    return frozenset(words.split())


ELEMENTS = _names(
    """svg g defs symbol use title desc switch
    path rect circle ellipse line polyline polygon text tspan textPath image
    linearGradient radialGradient stop pattern clipPath mask marker
    filter feBlend feColorMatrix feComponentTransfer feComposite feDropShadow feFlood
    feFuncA feFuncB feFuncG feFuncR feGaussianBlur feMerge feMergeNode feMorphology feOffset
    """
)

# Attributes without a namespace. None of them runs code or names another document:
# event handlers, style, and animation attributes are absent on purpose.
ATTRIBUTES = _names(
    """id class lang version baseProfile viewBox preserveAspectRatio
    x y width height cx cy r rx ry fx fy fr x1 y1 x2 y2 dx dy d points pathLength rotate
    transform href textLength lengthAdjust startOffset method spacing side
    fill fill-opacity fill-rule stroke stroke-width stroke-opacity stroke-linecap
    stroke-linejoin stroke-miterlimit stroke-dasharray stroke-dashoffset opacity color
    display visibility overflow clip clip-path clip-rule mask filter
    marker-start marker-mid marker-end paint-order vector-effect shape-rendering
    text-rendering image-rendering color-interpolation color-interpolation-filters
    color-rendering stop-color stop-opacity flood-color flood-opacity lighting-color
    font-family font-size font-size-adjust font-stretch font-style font-variant font-weight
    text-anchor text-decoration dominant-baseline alignment-baseline baseline-shift
    letter-spacing word-spacing writing-mode direction unicode-bidi
    gradientUnits gradientTransform spreadMethod offset
    patternUnits patternContentUnits patternTransform clipPathUnits maskUnits maskContentUnits
    markerUnits markerWidth markerHeight refX refY orient
    filterUnits primitiveUnits in in2 result mode operator k1 k2 k3 k4 type values
    tableValues slope intercept amplitude exponent stdDeviation edgeMode radius
    """
)
NAMESPACED_ATTRIBUTES = frozenset(
    {f"{{{XLINK_NS}}}href", f"{{{XLINK_NS}}}title", f"{{{XML_NS}}}space", f"{{{XML_NS}}}lang"}
)

LOCAL_REF = re.compile(r"#[A-Za-z_][\w.:-]*")
EMBEDDED_IMAGE = re.compile(r"data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]*")
# The one form of url() a logo may use: a reference to one of its own elements.
URL_FUNCTION = re.compile(r"url\(", re.IGNORECASE)
LOCAL_URL = re.compile(r"""url\(\s*(['"]?)#[A-Za-z_][\w.:-]*\1\s*\)""", re.IGNORECASE)


class BadLogo(InvalidValue):
    """A file that may not be used as a logo; the message says why."""


class _NoInstructions(TreeBuilder):
    """``<?xml-stylesheet ...?>`` would load a style sheet; the parser drops processing
    instructions from the tree, so they are refused while parsing."""

    def pi(self, target: str, text: str | None = None) -> Element:
        raise BadLogo(f"an SVG logo may not contain processing instructions (<?{target}?>)")


def _parse(text: str) -> Element:
    # No DTD, so no entities beyond the predefined ones and character references.
    parser = SafeET.DefusedXMLParser(target=_NoInstructions(), forbid_dtd=True)
    parser.feed(text)
    root: Element = parser.close()
    return root


def _name(qualified: str) -> tuple[str | None, str]:
    if qualified.startswith("{"):
        namespace, _, local = qualified[1:].partition("}")
        return namespace, local
    return None, qualified


def _check_value(tag: str, attr: str, value: str) -> None:
    if attr in ("href", f"{{{XLINK_NS}}}href"):
        local = LOCAL_REF.fullmatch(value.strip())
        embedded = tag == "image" and EMBEDDED_IMAGE.fullmatch(value.strip())
        if not (local or embedded):
            raise BadLogo(
                "an SVG logo may only link to its own elements (#id) "
                "or embed a PNG, JPEG, GIF or WebP image"
            )
    # Presentation attributes are CSS: an escape could spell url( in disguise.
    if "\\" in value:
        raise BadLogo(f"an SVG logo's {attr} attribute may not hold a backslash")
    if len(URL_FUNCTION.findall(value)) != len(LOCAL_URL.findall(value)):
        raise BadLogo(f"an SVG logo's {attr} attribute may only use url(#id)")


def _check_element(el: Element) -> None:
    if not isinstance(el.tag, str):
        return  # a comment: inert
    namespace, tag = _name(el.tag)
    if namespace not in (SVG_NS, None) or tag not in ELEMENTS:
        raise BadLogo(f"an SVG logo may not contain <{tag}>")
    for name, value in el.attrib.items():
        namespace, attr = _name(name)
        if (namespace is None and attr not in ATTRIBUTES) or (
            namespace is not None and name not in NAMESPACED_ATTRIBUTES
        ):
            raise BadLogo(f"an SVG logo may not have the attribute {attr!r} (on <{tag}>)")
        _check_value(tag, name if namespace else attr, value)


def check_svg(data: bytes) -> str:
    """The SVG text if it may be used as a logo, else ``BadLogo`` saying why."""
    if not data:
        raise BadLogo("the logo file is empty")
    if len(data) > MAX_BYTES:
        raise BadLogo(f"an SVG logo is at most {MAX_BYTES // 1024} KiB")
    try:
        text = data.decode("utf-8")
        root = _parse(text)
    except (UnicodeDecodeError, SafeET.ParseError, DefusedXmlException) as exc:
        raise BadLogo(f"the logo is not a well-formed SVG file: {exc}") from exc
    if root.tag not in (f"{{{SVG_NS}}}svg", "svg"):
        raise BadLogo("the logo's root element must be <svg>")
    for el in root.iter():
        _check_element(el)
    return text


def integration_logo(db: MetaDB, client_id: str) -> str | None:
    """The SVG an integration registered (checked by ``check_svg`` then), if any."""
    with db.session() as s:
        integration = oauth_repo.get_integration(s, client_id)
        return integration.logo_svg if integration else None
