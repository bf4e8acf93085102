"""CSS read the way a browser reads it, for the hidden-text boundary in `pipeline.fetch.visibility`.

Hidden text is where prompt injection hides, so the reading of a page's CSS must not fall out of
step with the browser's: a `;` inside `url(data:…;base64,…)` or a quoted string, a `}` or `/*`
inside a string, a block left open at the end of a sheet, `<!--` around rules, a bad declaration
in the middle of a block. tinycss2 tokenizes and parses stylesheets, blocks and `style`
attributes by the CSS Syntax Level 3 rules that browsers follow; cssselect (through lxml's XPath)
matches selectors with their combinators, attribute selectors and pseudo-classes, and gives their
specificity. Nested rules (CSS Nesting) are flattened into `:is(parent) child` selectors.

Only the declarations whose property is in the caller's `keep` set are returned; the
`background` shorthand is split into `background-color` (a colour token, or "unknown" for a
`var()`) and `background-image` ("image" or "none") by its tokens, so `url(red.png)` is an image
and never the colour red.

Failure policy: never raises; a rule or selector that cannot be read is skipped, as a browser
drops it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import tinycss2
from tinycss2 import ast

from pipeline.fetch.colours import parse_colour

Declaration = tuple[str, str, bool]  # property, value (lower case), !important

CONDITIONAL_AT_RULES = frozenset({"media", "supports", "container", "document"})
_TRANSPARENT_BLOCKS = frozenset({"layer", "scope", "starting-style"})  # rules apply as if bare
_COLOUR_FUNCTIONS = frozenset({"rgb", "rgba", "hsl", "hsla"})
_IMAGE_FUNCTIONS = frozenset(
    {"url", "image", "image-set", "element", "cross-fade", "-webkit-image-set"}
)


@dataclass(frozen=True)
class CssRule:
    """One style rule: its selector list as text, the declarations kept, where it applies."""

    selector: str
    declarations: tuple[Declaration, ...]
    conditional: bool  # inside @media, @supports, ...: applies on some screens only
    order: int  # source order across the whole sheet


def inline_declarations(style: str, keep: frozenset[str]) -> list[Declaration]:
    """Return the kept declarations of a `style` attribute, in order."""
    nodes = tinycss2.parse_blocks_contents(style, skip_comments=True, skip_whitespace=True)
    return list(_declarations(nodes, keep))


def style_rules(css: str, keep: frozenset[str], *, conditional: bool = False) -> list[CssRule]:
    """Return the rules of a stylesheet that declare a kept property, nested ones flattened."""
    nodes = tinycss2.parse_stylesheet(css, skip_comments=True, skip_whitespace=True)
    return list(_rules(nodes, keep, conditional, None, itertools.count()))


def _rules(
    nodes: Iterable[Any],
    keep: frozenset[str],
    conditional: bool,
    parent: str | None,
    counter: Iterator[int],
) -> Iterator[CssRule]:
    for node in nodes:
        if isinstance(node, ast.QualifiedRule):
            selector = _nested_selector(node.prelude, parent)
            if selector is None:
                continue
            content = _contents(node.content)
            declarations = tuple(_declarations(content, keep))
            if declarations:
                yield CssRule(selector, declarations, conditional, next(counter))
            yield from _rules(content, keep, conditional, selector, counter)
        elif isinstance(node, ast.AtRule) and node.content is not None:
            name = node.lower_at_keyword
            if name not in CONDITIONAL_AT_RULES and name not in _TRANSPARENT_BLOCKS:
                continue  # @font-face, @keyframes, @page...: no elements are selected
            inner = conditional or name in CONDITIONAL_AT_RULES
            content = _contents(node.content)
            if parent is not None:  # `.a { @media (...) { display: none } }`
                declarations = tuple(_declarations(content, keep))
                if declarations:
                    yield CssRule(parent, declarations, inner, next(counter))
            yield from _rules(content, keep, inner, parent, counter)


def _contents(tokens: list[Any] | None) -> list[Any]:
    nodes: list[Any] = tinycss2.parse_blocks_contents(
        tokens or [], skip_comments=True, skip_whitespace=True
    )
    return nodes


def _nested_selector(prelude: list[Any], parent: str | None) -> str | None:
    """Return a rule's selector list as text, a nested one made absolute; None when empty."""
    parts: list[list[Any]] = [[]]
    for token in prelude:
        if isinstance(token, ast.LiteralToken) and token.value == ",":
            parts.append([])
        else:
            parts[-1].append(token)
    selectors = [tinycss2.serialize(part).strip() for part in parts]
    if not all(selectors):
        return None  # an empty member invalidates the whole list, as in a browser
    if parent is None:
        return ", ".join(selectors)
    scope = f":is({parent})"
    return ", ".join(s.replace("&", scope) if "&" in s else f"{scope} {s}" for s in selectors)


def _declarations(nodes: Iterable[Any], keep: frozenset[str]) -> Iterator[Declaration]:
    for node in nodes:
        if not isinstance(node, ast.Declaration):
            continue  # nested rules, at-rules and parse errors
        name = node.lower_name
        if name == "background":
            yield from _background(node.value, node.important)
        elif name in keep:
            yield name, tinycss2.serialize(node.value).strip().lower(), bool(node.important)


def _background(tokens: list[Any], important: bool) -> Iterator[Declaration]:
    """Split the `background` shorthand into its colour and its image, token by token."""
    image, colour, unknown = False, "transparent", False
    for token in tokens:
        if isinstance(token, ast.URLToken):
            image = True
        elif isinstance(token, ast.FunctionBlock):
            name = token.lower_name
            if name in _IMAGE_FUNCTIONS or name.endswith("gradient"):
                image = True
            elif name == "var" or name == "env":
                unknown = True
            elif name in _COLOUR_FUNCTIONS or name in ("hwb", "lab", "lch", "oklab", "oklch"):
                colour = tinycss2.serialize([token]).lower()
        elif isinstance(token, ast.HashToken | ast.IdentToken):
            text = tinycss2.serialize([token]).lower()
            if parse_colour(text) is not None:
                colour = text
    yield "background-image", "image" if image else "none", important
    yield "background-color", "var(unknown)" if unknown else colour, important
