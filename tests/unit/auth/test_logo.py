from __future__ import annotations

import pytest

from limelight.auth.oauth.logo import MAX_BYTES, BadLogo, check_svg

NS = 'xmlns="http://www.w3.org/2000/svg"'
OK = f'<svg {NS} viewBox="0 0 10 10"><circle cx="5" cy="5" r="4" fill="red"/></svg>'


def test_a_plain_svg_is_accepted() -> None:
    assert check_svg(OK.encode()) == OK
    linked = f'<svg {NS} xmlns:x="http://www.w3.org/1999/xlink"><use x:href="#a"/></svg>'
    assert check_svg(linked.encode()) == linked


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


def test_not_utf8_is_refused() -> None:
    with pytest.raises(BadLogo):
        check_svg(b"<svg \xff\xfe/>")
