"""Visibility: what a reader of a rendered HTML page cannot see, removed before extraction.

Hidden text is a favourite place for prompt injection: `drop_invisible` removes it from the
parsed page so that it never reaches the document text, a model or a quote. An element is
hidden when it is not rendered (scripts, styles, templates and the like; the `hidden`
attribute, `aria-hidden="true"`, hidden inputs, common utility classes such as `sr-only` or
`d-none`; `display:none`, `visibility:hidden`), drawn in invisible ink (`opacity` near 0;
a text colour, `color` or `<font color>`, whose contrast ratio with the background behind it
is under `MIN_CONTRAST`, transparent included), too small to read (`font-size`, or a clipped
box, of at most `TINY_PX`; a zero-area `clip` or `clip-path`; `scale(0)`) or pushed above or
left of the page where no scrolling reaches (`left`, `top`, margins, `text-indent` or
`translate` of `-OFFSCREEN_PX` or beyond).

Styles are read from `style` attributes and from the page's own `<style>` blocks, with the
cascade's order of importance, inline style and specificity. The CSS is parsed as a browser
parses it (`pipeline.fetch.css`: tinycss2 for sheets and declarations, so strings, `url(...)`,
comments and unclosed blocks cannot knock the reading out of step) and selectors are matched by
cssselect through lxml, combinators, attribute selectors and structural pseudo-classes included;
pseudo-elements and dynamic pseudo-classes (`:hover`) never hide. External stylesheets are not
read: they cannot be seen without fetching them. A rule inside `@media` or `@supports` (or a
`<style media="print">`) never hides; one that shows an element (`display` other than none,
`visibility:visible`) on some screens cancels `display` and `visibility` hiding by the page's
rules, as responsive utility classes (`hidden md:block`) do.

Colours: the background behind a text is the nearest background colour set on the element or
an ancestor (`background`, `background-color`, `bgcolor`; translucent ones blended), white
when none is. A background image or gradient, or a colour that cannot be read, makes the
background unknown, and a text whose colour no style sets, or that carries a `text-shadow` or
stroke, is never taken for invisible ink: only a colour the page sets and a background it sets
(or white) are compared. A colour-hidden element loses its own text; its descendants are judged
on their own colours, so white text on a dark inner box stays. The cost of the white default:
white text on a dark background set only by an external stylesheet is dropped (lost evidence,
never a leak).

Failure policy: never raises; a style or colour that cannot be read counts as visible.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

import cssselect
from cssselect import HTMLTranslator
from lxml import etree

from pipeline.fetch.colours import RGB, RGBA, WHITE, blend, contrast, fraction, parse_colour
from pipeline.fetch.css import CssRule, Declaration, inline_declarations, style_rules

MIN_CONTRAST = 1.2  # WCAG contrast ratio under which text is taken for invisible ink
MAX_OPACITY = 0.05
TINY_PX = 1.0
OFFSCREEN_PX = 999.0

_INVISIBLE_TAGS = frozenset({"script", "style", "template", "noscript", "iframe", "object"})
_HIDDEN_CLASSES = frozenset({"hidden", "d-none", "sr-only", "visually-hidden", "invisible"})
# "hidden md:block" (Tailwind) or "d-none d-lg-block" (Bootstrap) is shown on larger screens.
_RESPONSIVE_CLASS = re.compile(r":|^d-(?:sm|md|lg|xl|xxl)-")
# The properties that decide whether text is seen; declarations of others are not kept.
_PROPERTIES = frozenset(
    {
        "display", "visibility", "opacity", "color", "-webkit-text-fill-color", "text-shadow",
        "-webkit-text-stroke", "-webkit-text-stroke-width", "background-color",
        "background-image", "font-size", "left", "top", "margin-left",
        "margin-top", "text-indent", "transform", "translate", "width", "height", "max-width",
        "max-height", "overflow", "overflow-x", "overflow-y", "clip", "clip-path", "scale",
    }
)  # fmt: skip
_PX_PER_UNIT = {
    "px": 1.0, "pt": 4 / 3, "pc": 16.0, "em": 16.0, "rem": 16.0, "ex": 8.0, "ch": 8.0,
    "in": 96.0, "cm": 96 / 2.54, "mm": 96 / 25.4, "q": 96 / 101.6,
}  # fmt: skip
_LENGTH = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+))([a-z%]*)")
_TRANSLATE = re.compile(r"translate(?:x|y|3d)?\(([^)]*)\)")
_SCALE_ZERO = re.compile(r"scale[xy3d]*\(\s*[+-]?0*\.?0*(?:\s*[,)]|\s+0)")
_CLIP_PATH_ZERO = re.compile(
    r"inset\(\s*(?:[5-9]\d|\d{3})(?:\.\d+)?%|circle\(\s*0(?:px|%)?\s*(?:at|\))"
)


def drop_invisible(tree: Any) -> None:
    """Remove the elements and blank the text that a reader of the rendered page would not see."""
    sheet = StyleSheet.of(tree)
    doomed = []
    stack: list[tuple[Any, _Ink]] = [(tree, _Ink(None, WHITE, shadowed=False))]
    while stack:
        element, ink = stack.pop()
        if not isinstance(element.tag, str):
            continue  # comments and processing instructions
        style = sheet.style_of(element)
        if element.tag not in ("html", "body") and _not_shown(element, style):
            doomed.append(element)
            continue
        ink = ink.under(element, style.values)
        if ink.invisible:
            element.text = None
            for child in element:
                child.tail = None  # a child's tail is its parent's text, in the parent's ink
        stack.extend((child, ink) for child in element)
    for element in doomed:
        element.drop_tree()  # keeps the tail text, which belongs to the parent


@dataclass(frozen=True)
class Style:
    """The declarations that apply to one element, after the cascade."""

    values: dict[str, str]
    inline: frozenset[str]  # the properties whose value comes from the style attribute
    revealed: bool  # a conditional rule shows the element on some screens


@dataclass(frozen=True)
class _Match:
    weight: tuple[int, int, int, int]  # specificity (ids, classes, tags), then source order
    declarations: tuple[Declaration, ...]
    conditional: bool  # inside @media or @supports: applies on some screens only


class StyleSheet:
    """The rules of a page's own `<style>` blocks that bear on visibility, matched to elements."""

    def __init__(self, matches: dict[Any, list[_Match]]) -> None:
        self._matches = matches

    @classmethod
    def of(cls, tree: Any) -> StyleSheet:
        """Return the style sheet of the page's `<style>` blocks, matched against tree."""
        rules: list[CssRule] = []
        for style in tree.iter("style"):
            if any(a.tag == "template" for a in style.iterancestors()):
                continue
            media = (style.get("media") or "all").strip().lower()
            screens = media in ("", "all", "screen")
            rules += style_rules("".join(style.itertext()), _PROPERTIES, conditional=not screens)
        matches: dict[Any, list[_Match]] = {}
        for order, rule in enumerate(rules):
            for specificity, found in _select(tree, rule.selector):
                entry = _Match((*specificity, order), rule.declarations, rule.conditional)
                for element in found:
                    matches.setdefault(element, []).append(entry)
        return cls(matches)

    def style_of(self, element: Any) -> Style:
        """Return the cascaded visibility declarations of element."""
        ranked: list[tuple[tuple[int, ...], str, str]] = []
        revealed = False
        for rule in self._matches.get(element, ()):
            if rule.conditional:
                revealed = revealed or any(
                    (prop == "display" and value != "none")
                    or (prop == "visibility" and value == "visible")
                    for prop, value, _ in rule.declarations
                )
            else:
                ranked += [((imp, 0, *rule.weight), p, v) for p, v, imp in rule.declarations]
        inline = enumerate(inline_declarations(element.get("style") or "", _PROPERTIES))
        ranked += [((imp, 1, 0, 0, 0, n), p, v) for n, (p, v, imp) in inline]
        ranked.sort(key=lambda entry: entry[0])  # importance, inline, specificity, order
        values = {prop: value for _, prop, value in ranked}  # the last ranked wins
        winners = {prop: weight for weight, prop, _ in ranked}
        from_inline = frozenset(prop for prop, weight in winners.items() if weight[1] == 1)
        return Style(values, from_inline, revealed)


_TRANSLATOR = HTMLTranslator()
_PSEUDO_CLASS = re.compile(r"(?<!:):[-\w]+(?:\([^()]*\))?")


def _select(tree: Any, selectors: str) -> list[tuple[tuple[int, int, int], list[Any]]]:
    """Return each selector of a list with its specificity and the elements it matches.

    A list that cssselect cannot parse is dropped whole, as a browser drops it; a selector of
    a pseudo-element (`::before`) styles generated content, not the element. A valid selector
    that cssselect cannot translate (`:not(:first-of-type)`) is matched with its pseudo-classes
    removed: more elements than a browser's, so it may hide evidence but never leaks text.
    """
    try:
        parsed = cssselect.parse(selectors)
    except cssselect.SelectorError:
        return []
    found = []
    for selector in parsed:
        if selector.pseudo_element is not None:
            continue
        try:
            path = _xpath(_TRANSLATOR.selector_to_xpath(selector))
        except cssselect.ExpressionError:
            path = _widened(selector.canonical())
        except (cssselect.SelectorError, etree.XPathError):
            continue
        if path is None:
            continue
        elements = [e for e in path(tree) if isinstance(getattr(e, "tag", None), str)]
        if elements:
            found.append((selector.specificity(), elements))
    return found


def _widened(selector: str) -> Any:
    """Return the XPath of selector with every pseudo-class dropped; None when unreadable."""
    previous = None
    while previous != selector:
        previous, selector = selector, _PSEUDO_CLASS.sub("", selector)
    try:
        return _xpath(_TRANSLATOR.css_to_xpath(selector or "*"))
    except (cssselect.SelectorError, etree.XPathError):
        return None


@functools.lru_cache(maxsize=4096)
def _xpath(expression: str) -> Any:
    return etree.XPath(expression)


@dataclass(frozen=True)
class _Ink:
    """The colour text is written in and the colour behind it; None when unknown."""

    colour: RGBA | None
    background: RGB | None
    shadowed: bool  # a text shadow or stroke draws the letters in another colour

    def under(self, element: Any, style: dict[str, str]) -> _Ink:
        """Return the ink of element's own text, inherited from this one (its parent's)."""
        colour = self.colour
        written = style.get("-webkit-text-fill-color") or style.get("color")
        if written is None and element.tag == "font":
            written = _legacy(element.get("color"))
        if written is not None and written not in ("inherit", "currentcolor"):
            colour = parse_colour(written)
        background = self.background
        painted = style.get("background-color") or _legacy(element.get("bgcolor"))
        if style.get("background-image", "none") != "none" or element.get("background"):
            background = None  # an image: what is behind the text cannot be known
        elif painted is not None:
            paint = parse_colour(painted)
            if paint is None or (background is None and paint[3] < 1):
                background = None
            elif paint[3] > 0:
                background = blend(paint, background or WHITE)
        shadowed = self.shadowed
        for prop in ("text-shadow", "-webkit-text-stroke", "-webkit-text-stroke-width"):
            if prop in style:
                shadowed = style[prop] not in ("none", "0", "0px", "initial", "unset")
        return _Ink(colour, background, shadowed)

    @property
    def invisible(self) -> bool:
        """Return whether text in this ink cannot be told from its background."""
        if self.colour is None or self.background is None or self.shadowed:
            return False
        seen = blend(self.colour, self.background)
        return contrast(seen, self.background) < MIN_CONTRAST


def _legacy(value: str | None) -> str | None:
    """Return an HTML colour attribute as CSS: browsers read `bgcolor="ffffff"` as #ffffff."""
    if value and re.fullmatch(r"[0-9a-fA-F]{6}", value.strip()):
        return "#" + value.strip()
    return value


def _not_shown(element: Any, style: Style) -> bool:
    """Return whether element and all it holds are out of a reader's sight."""
    tag = element.tag
    if tag in _INVISIBLE_TAGS:
        return not (tag == "script" and "ld+json" in (element.get("type") or "").lower())
    classes = (element.get("class") or "").split()
    values = style.values
    certain = {p for p in ("display", "visibility") if p in style.inline or not style.revealed}
    return bool(
        element.get("hidden") is not None
        or (element.get("aria-hidden") or "").strip().lower() == "true"
        or (tag == "input" and (element.get("type") or "").lower() == "hidden")
        or (
            _HIDDEN_CLASSES.intersection(classes)
            and not any(_RESPONSIVE_CLASS.search(name) for name in classes)
        )
        or ("display" in certain and values.get("display") == "none")
        or ("visibility" in certain and values.get("visibility") in ("hidden", "collapse"))
        or _below(values.get("opacity"), MAX_OPACITY, percent=True)
        or _below(_px(values.get("font-size")), TINY_PX)
        or _clipped(values)
        or _offscreen(values)
    )


def _clipped(values: dict[str, str]) -> bool:
    overflow = {values.get(p) for p in ("overflow", "overflow-x", "overflow-y")}
    boxed = bool(overflow & {"hidden", "clip"})
    sizes = ("width", "height", "max-width", "max-height")
    if boxed and any(_below(_px(values.get(p)), TINY_PX) for p in sizes):
        return True
    flat = _SCALE_ZERO.search(values.get("transform", "")) or any(
        re.fullmatch(r"[+-]?0*\.?0*%?", factor) for factor in values.get("scale", "").split()
    )
    if flat or _CLIP_PATH_ZERO.search(values.get("clip-path", "")):
        return True
    clip = re.fullmatch(r"rect\(([^)]*)\)", values.get("clip", ""))
    if clip:
        sides = [_px(s) for s in re.split(r"[\s,]+", clip.group(1).strip())]
        if len(sides) == 4 and None not in sides:
            top, right, bottom, left = (s or 0.0 for s in sides)
            return bottom <= top or right <= left
    return False


def _offscreen(values: dict[str, str]) -> bool:
    """Return whether the element is pushed above or left of the page, beyond any scrolling."""
    # `left` and `top` move only positioned boxes, but the position may come from a stylesheet
    # we cannot see, and no visible text sits a thousand pixels left of or above the page.
    offsets = [values.get(p) for p in ("left", "top", "margin-left", "margin-top", "text-indent")]
    for move in _TRANSLATE.findall(values.get("transform", "")):
        offsets += re.split(r"[\s,]+", move.strip())
    offsets += values.get("translate", "").split()
    return any(_below(_px(offset), -OFFSCREEN_PX) for offset in offsets)


def _px(value: str | None) -> float | None:
    """Return a CSS length in pixels; None for relative or unreadable lengths."""
    match = _LENGTH.fullmatch(value or "")
    if match is None:
        return None
    number, unit = float(match.group(1)), match.group(2)
    if not unit:
        return number if number == 0 else None
    scale = _PX_PER_UNIT.get(unit)
    return number * scale if scale is not None else None


def _below(value: str | float | None, limit: float, *, percent: bool = False) -> bool:
    """Return whether a number (or, with percent, a number or percentage) is at most limit."""
    if isinstance(value, str):
        try:
            number = fraction(value) if percent else float(value)
        except ValueError:
            return False
        return number <= limit
    return value is not None and value <= limit
