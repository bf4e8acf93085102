"""The hidden-text boundary against CSS written to knock a hand-rolled parser out of step.

Each hidden case is text a browser does not show; each shown case is text it shows although a
naive reading (splitting on `;`, counting braces, ignoring strings or combinators) would hide
it or lose the rules after it.
"""

from __future__ import annotations

import pytest

from pipeline.fetch.css import inline_declarations, style_rules
from pipeline.fetch.extract import extract_document
from tests.pipeline.fetch.test_extract import LANES, ORDER, URL, WORKS, article


def _style(css: str) -> str:
    return f"<style>{css}</style>"


HIDDEN = {
    "brace-in-a-string-before-the-rule": (
        '<p class="hide">{}</p>', _style('.a { content: "{" } .hide { display: none }')
    ),
    "close-brace-in-a-string": (
        '<p class="hide">{}</p>', _style(".a { content: '}' ; } .hide { opacity: 0 }")
    ),
    "comment-opener-in-a-string": (
        '<p class="hide">{}</p>',
        _style('.a { content: "/*" } .hide { display: none } .b { content: "*/" }'),
    ),
    "data-url-with-semicolons-inline": (
        '<p style="background:url(data:image/png;base64,iVBO;R;w0K);display:none">{}</p>', ""
    ),
    "data-url-with-braces-in-a-sheet": (
        '<p class="hide">{}</p>',
        _style('.a { background: url("data:image/svg+xml;utf8,<svg>}{</svg>") } '
               ".hide { display: none }"),
    ),
    "quoted-semicolon-inline": ('<p style="font-family:\'a;b\';visibility:hidden">{}</p>', ""),
    "unclosed-block-at-the-end": ('<p class="hide">{}</p>', _style(".hide { display: none")),
    "html-comment-markers-around-rules": (
        '<p class="hide">{}</p>', _style("<!-- .hide { display: none } -->")
    ),
    "bad-declaration-in-the-middle": (
        '<p class="hide">{}</p>', _style(".hide { color: ; @x; ]; display: none }")
    ),
    "escaped-class-name": ('<p class="hide">{}</p>', _style(".h\\69 de { display: none }")),
    "child-combinator": ('<p class="x">{}</p>', _style("article > p.x { display: none }")),
    "descendant-combinator": ('<p class="x">{}</p>', _style("body article .x { opacity: 0 }")),
    "sibling-combinator": ("<p>{}</p>", _style("h1 + p + p { font-size: 0 }")),
    "attribute-selector": ('<p data-k="1">{}</p>', _style('[data-k="1"] { display: none }')),
    "negation": ('<p class="y">{}</p>', _style("article p:not(.z):nth-of-type(2)"
                                              " { visibility: hidden }")),
    "pseudo-class-cssselect-lacks-hides-more": (
        '<p class="y">{}</p>', _style("p.y:not(:first-of-type) { visibility: hidden }")
    ),
    "is-list": ('<p id="q">{}</p>', _style(":is(#nothing, #q) { display: none }")),
    "nested-rule": ('<p class="x">{}</p>', _style("article { .x { display: none } }")),
    "nested-ampersand": ('<p class="x">{}</p>', _style("p { &.x { opacity: 0 } }")),
    "two-tags-lose-to-a-class": (
        '<p class="w">{}</p>', _style(".w { color: #fff } article p { color: #000 }")
    ),
    "important-inside-a-layer": (
        '<p class="w" style="display:block">{}</p>',
        _style("@layer a { .w { display: none !important } }"),
    ),
}  # fmt: skip

SHOWN = {
    "semicolon-in-a-quoted-font": ('<p style=\'font-family: "x; opacity: 0; y"\'>{}</p>', ""),
    "display-none-inside-a-string": (
        "<p>{}</p>", _style('p::after { content: "} p { display: none }" }')
    ),
    "rule-inside-a-comment": ("<p>{}</p>", _style("/* p { display: none } */")),
    "pseudo-element-only": ("<p>{}</p>", _style("p::before { display: none; opacity: 0 }")),
    "hover-only": ("<p>{}</p>", _style("p:hover { opacity: 0 }")),
    "invalid-selector-drops-the-list": (
        '<p class="x">{}</p>', _style(".x, p:::bad { display: none }")
    ),
    "id-beats-a-class": (
        '<div id="d"><p class="w">{}</p></div>', _style("#d p { color: #000 } .w { color: #fff }")
    ),
    "print-stylesheet": ('<p class="x">{}</p>', '<style media="print">.x { display:none }</style>'),
    "combinator-that-does-not-match": ('<p class="x">{}</p>', _style("nav > .x { display:none }")),
    "background-image-url-named-red": (
        '<div style="background: url(white.png)"><p style="color:#fff">{}</p></div>', ""
    ),
}  # fmt: skip


@pytest.mark.parametrize(("html", "head"), HIDDEN.values(), ids=HIDDEN.keys())
def test_css_that_hides_is_read_as_a_browser_reads_it(html: str, head: str) -> None:
    doc = extract_document(article(html.format(ORDER), head=head), url=URL, domain="x.example")

    assert "ZQXMARK" not in doc.text
    assert LANES in doc.text and WORKS in doc.text


@pytest.mark.parametrize(("html", "head"), SHOWN.values(), ids=SHOWN.keys())
def test_css_that_only_looks_like_hiding_keeps_the_text(html: str, head: str) -> None:
    doc = extract_document(article(html.format(ORDER), head=head), url=URL, domain="x.example")

    assert "ZQXMARK" in doc.text
    assert LANES in doc.text and WORKS in doc.text


def test_declarations_keep_strings_and_urls_whole() -> None:
    keep = frozenset({"display", "font-family"})
    parsed = inline_declarations("font-family:'a;b' ; display : NONE !important; x:y", keep)

    assert parsed == [("font-family", '"a;b"', False), ("display", "none", True)]


def test_rules_are_flattened_with_their_conditions_and_order() -> None:
    css = (
        ".a { display: none } @media (min-width: 9px) { .b { display: block } } "
        ".c { .d { opacity: 0 } }"
    )
    rules = style_rules(css, frozenset({"display", "opacity"}))

    assert [(r.selector, r.conditional, r.order) for r in rules] == [
        (".a", False, 0),
        (".b", True, 1),
        (":is(.c) .d", False, 2),
    ]
