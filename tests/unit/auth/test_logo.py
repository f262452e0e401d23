from __future__ import annotations

import pytest

from limelight.auth.oauth.logo import MAX_BYTES, BadLogo, check_svg

NS = 'xmlns="http://www.w3.org/2000/svg"'
XLINK = 'xmlns:xlink="http://www.w3.org/1999/xlink"'
OK = f'<svg {NS} viewBox="0 0 10 10"><circle cx="5" cy="5" r="4" fill="red"/></svg>'

# A logo as design tools export them: paths, groups, gradients, a clip, text, a
# local <use> (both href spellings), a drop shadow and an embedded raster image.
ORDINARY = f"""<?xml version="1.0" encoding="UTF-8"?>
<!-- Acme logo -->
<svg {NS} {XLINK} width="64" height="64" viewBox="0 0 64 64" fill="none" version="1.1">
  <title>Acme</title>
  <defs>
    <linearGradient id="grad" x1="0" y1="0" x2="1" y2="1" gradientUnits="objectBoundingBox">
      <stop offset="0" stop-color="#2f6fed"/>
      <stop offset="1" stop-color="#8a3ffc" stop-opacity="0.8"/>
    </linearGradient>
    <radialGradient id="glow" cx="50%" cy="50%" r="50%" xlink:href="#grad"/>
    <clipPath id="clip"><rect width="64" height="64" rx="12"/></clipPath>
    <filter id="shadow" x="-10%" y="-10%" width="120%" height="120%"
            color-interpolation-filters="sRGB">
      <feGaussianBlur in="SourceAlpha" stdDeviation="1.5"/>
      <feOffset dx="0" dy="1" result="offset"/>
      <feColorMatrix type="matrix" values="0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0.25 0"/>
      <feMerge><feMergeNode/><feMergeNode in="SourceGraphic"/></feMerge>
    </filter>
    <path id="mark" d="M8 32 L32 8 L56 32 L32 56 Z"/>
  </defs>
  <g clip-path="url(#clip)" filter="url('#shadow')" transform="translate(0 0)">
    <rect width="64" height="64" fill="url(#grad)"/>
    <use href="#mark" fill="#fff" fill-opacity=".9" stroke="url(#glow)" stroke-width="2"/>
    <use xlink:href="#mark" transform="scale(.5) translate(32 32)" fill="currentColor"/>
    <text x="32" y="60" font-family="Inter, sans-serif" font-size="6" text-anchor="middle"
          xml:space="preserve">ACME</text>
    <image x="0" y="0" width="1" height="1"
           href="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="/>
  </g>
</svg>
"""


def test_a_plain_svg_is_accepted() -> None:
    assert check_svg(OK.encode()) == OK
    linked = f'<svg {NS} xmlns:x="http://www.w3.org/1999/xlink"><use x:href="#a"/></svg>'
    assert check_svg(linked.encode()) == linked


def test_an_ordinary_logo_with_gradients_filters_and_local_use_is_accepted() -> None:
    assert check_svg(ORDINARY.encode()) == ORDINARY


@pytest.mark.parametrize(
    "svg",
    [
        "",
        "not xml",
        f"<svg {NS}>",
        "<html/>",
        f"<svg {NS}><script>alert(1)</script></svg>",
        f"<svg {NS}><SCRIPT>alert(1)</SCRIPT></svg>",
        f'<svg {NS} onload="alert(1)"/>',
        f'<svg {NS}><rect onclick="x()"/></svg>',
        f"<svg {NS}><foreignObject><div/></foreignObject></svg>",
        f'<svg {NS}><a href="javascript:alert(1)"/></svg>',
        f'<svg {NS} xmlns:x="http://www.w3.org/1999/xlink"><image x:href="https://e.com/a.png"/></svg>',
        f'<svg {NS}><rect style="fill:url(http://e.com/x)"/></svg>',
        '<!DOCTYPE svg [<!ENTITY a "aaaa">]><svg xmlns="http://www.w3.org/2000/svg">&a;</svg>',
        f"<svg {NS}>" + " " * MAX_BYTES + "</svg>",
    ],
)
def test_refused(svg: str) -> None:
    with pytest.raises(BadLogo):
        check_svg(svg.encode())


@pytest.mark.parametrize(
    "svg",
    [
        # Animation that sets a link to an entity-obfuscated javascript: URL.
        f'<svg {NS}><a><set attributeName="href" to="java&#9;script:alert(1)"/></a></svg>',
        f'<svg {NS}><a><animate attributeName="href" values="jav&#x0A;ascript:x()"/></a></svg>',
        f'<svg {NS}><rect><animateTransform attributeName="transform" type="rotate"/></rect></svg>',
        f'<svg {NS}><path id="p"/><circle r="1"><animateMotion dur="1s"/></circle></svg>',
        # CSS that loads another document.
        f'<svg {NS}><rect style="background:url(//evil)"/></svg>',
        f'<svg {NS}><rect style="fill:red"/></svg>',
        f"<svg {NS}><style>@import url(//evil/x.css);</style></svg>",
        f'<?xml-stylesheet href="//evil/x.css"?><svg {NS}/>',
        # Presentation attributes are CSS: only url(#id) is a local reference.
        f'<svg {NS}><rect fill="url(//evil/x.svg#g)"/></svg>',
        f'<svg {NS}><rect fill="url( &quot;https://evil/x.svg#g&quot; )"/></svg>',
        f'<svg {NS}><rect fill="u\\72l(//evil)"/></svg>',
        f'<svg {NS}><rect filter="url(#ok) url(//evil)"/></svg>',
        # References outside the document, through use, gradients or images.
        f'<svg {NS}><use href="other.svg#a"/></svg>',
        f'<svg {NS} {XLINK}><linearGradient xlink:href="https://evil/g.svg#g"/></svg>',
        f'<svg {NS}><image href="data:image/svg+xml;base64,PHN2Zy8+"/></svg>',
        f'<svg {NS}><use href="data:image/png;base64,AAAA"/></svg>',
        f'<svg {NS}><filter><feImage href="#a"/></filter></svg>',
        # Elements and attributes outside the allow-list, whatever their namespace.
        f'<svg {NS}><h:script xmlns:h="http://www.w3.org/1999/xhtml">x()</h:script></svg>',
        f'<svg {NS} xmlns:ev="http://www.w3.org/2001/xml-events"><rect ev:event="click"/></svg>',
        f'<svg {NS}><rect attributeName="href"/></svg>',
        f"<svg {NS}><iframe/></svg>",
    ],
)
def test_active_content_and_outside_references_are_refused(svg: str) -> None:
    with pytest.raises(BadLogo):
        check_svg(svg.encode())


def test_the_reason_names_what_is_not_allowed() -> None:
    with pytest.raises(BadLogo, match="<set>"):
        check_svg(f'<svg {NS}><set to="x"/></svg>'.encode())
    with pytest.raises(BadLogo, match="'style'"):
        check_svg(f'<svg {NS}><rect style="fill:red"/></svg>'.encode())


def test_not_utf8_is_refused() -> None:
    with pytest.raises(BadLogo):
        check_svg(b"<svg \xff\xfe/>")
