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
cascade's order of importance, inline style and specificity. Only simple selectors (a tag,
classes, an id and compounds of those, in comma lists) are understood; rules with combinators,
pseudo-classes or attribute selectors are ignored, and so are external stylesheets, which
cannot be seen without fetching them. A rule inside `@media` or `@supports` never hides; one
that shows an element (`display` other than none, `visibility:visible`) on some screens
cancels `display` and `visibility` hiding by the page's rules, as responsive utility classes
(`hidden md:block`) do.

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

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pipeline.web.colours import RGB, RGBA, WHITE, blend, contrast, fraction, parse_colour

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
_CONDITIONAL_AT_RULES = frozenset({"media", "supports", "container", "document"})
_PX_PER_UNIT = {
    "px": 1.0, "pt": 4 / 3, "pc": 16.0, "em": 16.0, "rem": 16.0, "ex": 8.0, "ch": 8.0,
    "in": 96.0, "cm": 96 / 2.54, "mm": 96 / 25.4, "q": 96 / 101.6,
}  # fmt: skip
_LENGTH = re.compile(r"([+-]?(?:\d+\.?\d*|\.\d+))([a-z%]*)")
_IMPORTANT = re.compile(r"!\s*important\s*$")
_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_BRACE = re.compile(r"[{};]")
_NESTED = re.compile(r"[^{};]*\{[^{}]*\}")
_SELECTOR = re.compile(r"([a-z][a-z0-9-]*|\*)?((?:[.#](?:[-\w]|\\.)+)*)", re.I)
_SELECTOR_PART = re.compile(r"([.#])((?:[-\w]|\\.)+)")
_COLOUR_TOKEN = re.compile(r"(?:rgba?|hsla?)\([^)]*\)|#[0-9a-f]{3,8}\b|[a-z]+")
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
class _Rule:
    tag: str | None
    id: str | None
    classes: frozenset[str]
    weight: tuple[int, int, int, int]  # specificity (ids, classes, tags), then source order
    declarations: tuple[tuple[str, str, bool], ...]  # property, value, !important
    conditional: bool  # inside @media or @supports: applies on some screens only

    def matches(self, tag: str, ident: str | None, classes: set[str]) -> bool:
        return (
            (self.tag is None or self.tag == tag)
            and (self.id is None or self.id == ident)
            and self.classes <= classes
        )


class StyleSheet:
    """The rules of a page's own `<style>` blocks that bear on visibility, indexed for lookup."""

    def __init__(self, rules: list[_Rule]) -> None:
        self._by_key: dict[str, list[_Rule]] = {}
        for rule in rules:
            key = (
                f"#{rule.id}"
                if rule.id
                else f".{min(rule.classes)}"
                if rule.classes
                else rule.tag or "*"
            )
            self._by_key.setdefault(key, []).append(rule)

    @classmethod
    def of(cls, tree: Any) -> StyleSheet:
        """Return the style sheet of the page's `<style>` blocks."""
        css = "\n".join(
            "".join(style.itertext())
            for style in tree.iter("style")
            if not any(a.tag == "template" for a in style.iterancestors())
        )
        counter = itertools.count()
        return cls(list(_parse_rules(_COMMENT.sub(" ", css), False, counter)))

    def style_of(self, element: Any) -> Style:
        """Return the cascaded visibility declarations of element."""
        tag = element.tag.lower()
        ident = element.get("id")
        classes = set((element.get("class") or "").split())
        keys = ["*", tag, *(f".{name}" for name in classes)] + ([f"#{ident}"] if ident else [])
        ranked: list[tuple[tuple[int, ...], str, str]] = []
        revealed = False
        for key in keys:
            for rule in self._by_key.get(key, ()):
                if not rule.matches(tag, ident, classes):
                    continue
                if rule.conditional:
                    revealed = revealed or any(
                        (prop == "display" and value != "none")
                        or (prop == "visibility" and value == "visible")
                        for prop, value, _ in rule.declarations
                    )
                else:
                    ranked += [((imp, 0, *rule.weight), p, v) for p, v, imp in rule.declarations]
        inline = enumerate(_declarations(element.get("style") or ""))
        ranked += [((imp, 1, 0, 0, 0, n), p, v) for n, (p, v, imp) in inline]
        ranked.sort(key=lambda entry: entry[0])  # importance, inline, specificity, order
        values = {prop: value for _, prop, value in ranked}  # the last ranked wins
        winners = {prop: weight for weight, prop, _ in ranked}
        from_inline = frozenset(prop for prop, weight in winners.items() if weight[1] == 1)
        return Style(values, from_inline, revealed)


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


def _parse_rules(css: str, conditional: bool, counter: Iterator[int]) -> Iterator[_Rule]:
    for prelude, body in _blocks(css):
        if prelude.startswith("@"):
            name = re.split(r"[\s(]", prelude[1:], maxsplit=1)[0].lower()
            if name in _CONDITIONAL_AT_RULES:
                yield from _parse_rules(body, True, counter)
            elif name == "layer":
                yield from _parse_rules(body, conditional, counter)
            continue  # @font-face, @keyframes, @page...: no elements are selected
        declarations = tuple(_declarations(_NESTED.sub(" ", body)))
        if not declarations:
            continue
        order = next(counter)
        for selector in prelude.split(","):
            rule = _rule(selector.strip(), declarations, order, conditional)
            if rule is not None:
                yield rule


def _rule(
    selector: str, declarations: tuple[tuple[str, str, bool], ...], order: int, conditional: bool
) -> _Rule | None:
    match = _SELECTOR.fullmatch(selector)
    if not selector or match is None:
        return None  # combinators, pseudo-classes and attribute selectors are not understood
    tag = match.group(1)
    parts = [(kind, re.sub(r"\\(.)", r"\1", name)) for kind, name in _SELECTOR_PART.findall(
        match.group(2) or ""
    )]  # fmt: skip
    ids = [name for kind, name in parts if kind == "#"]
    classes = frozenset(name for kind, name in parts if kind == ".")
    if len(set(ids)) > 1:
        return None
    types = 1 if tag and tag != "*" else 0
    return _Rule(
        tag=tag.lower() if types else None,
        id=ids[0] if ids else None,
        classes=classes,
        weight=(len(ids), len(parts) - len(ids), types, order),
        declarations=declarations,
        conditional=conditional,
    )


def _blocks(css: str) -> Iterator[tuple[str, str]]:
    """Yield the prelude and body of each top-level block; statements (`@import ...;`) end
    without one."""
    depth, start, body = 0, 0, 0
    prelude = ""
    for mark in _BRACE.finditer(css):
        char = mark.group()
        if char == "{":
            if depth == 0:
                prelude, body = css[start : mark.start()].strip(), mark.end()
            depth += 1
        elif char == "}":
            if depth == 0:
                start = mark.end()  # a stray brace
                continue
            depth -= 1
            if depth == 0:
                yield prelude, css[body : mark.start()]
                start = mark.end()
        elif depth == 0:
            start = mark.end()


def _declarations(text: str) -> Iterator[tuple[str, str, bool]]:
    for part in text.split(";"):
        name, colon, value = part.partition(":")
        if not colon:
            continue
        name, value = name.strip().lower(), value.strip().lower()
        important = bool(_IMPORTANT.search(value))
        value = _IMPORTANT.sub("", value).strip()
        if name == "background":
            yield from _background(value, important)
        elif name in _PROPERTIES:
            yield name, value, important


def _background(value: str, important: bool) -> Iterator[tuple[str, str, bool]]:
    """Split the `background` shorthand into its colour and its image."""
    image = any(f in value for f in ("url(", "gradient(", "image(", "image-set(", "element("))
    yield "background-image", "image" if image else "none", important
    if "var(" in value:
        yield "background-color", value, important  # unreadable: the background is unknown
        return
    colour = next(
        (t for t in _COLOUR_TOKEN.findall(value) if parse_colour(t) is not None), "transparent"
    )
    yield "background-color", colour, important


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
