"""Property-based tests of fitting: long claims, long URLs, many references and items."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from pipeline.records.domain import Correction, CorrectionItem, CorrectionQuote, Label, Reference
from pipeline.reply.render import (
    MIN_BUDGET,
    markdown_url,
    markdown_without_reference_links,
    omission_line,
    render_markdown,
    render_plain,
)
from pipeline.reply.writer import OPENING

BUDGETS = (280, 500, 2_000, 3_000)
SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# A fixed vocabulary keeps generation cheap: unicode words, markdown specials, long words, and
# no brackets, so that every [n] in a rendering is a marker the renderer wrote.
_VOCABULARY = [
    *"the post says that vaccines cause harm and officials denied it".split(),
    *"ünïcödé naïve façade Ελληνικά кириллица 日本語の文 עברית العربية 🙂smile".split(),
    *"*bold* _under_ `code` ~~strike~~ a|b <tag> &amp; #hash it's well,".split(),
    "Donaudampfschifffahrtsgesellschaftskapitänswitwenrentenversicherung",
    "x" * 90,
    "1",
    "42",
]
_word = st.sampled_from(_VOCABULARY)
_words = st.one_of(
    st.lists(_word, min_size=1, max_size=8), st.lists(_word, min_size=20, max_size=60)
).map(" ".join)
_SEGMENTS = ["news", "2026", "fact-check_(update)", "a" * 40, "~tilde", "q=1&r=2", "Zx9-8.7"]
_path = st.one_of(
    st.lists(st.sampled_from(_SEGMENTS), max_size=3),
    st.lists(st.sampled_from(_SEGMENTS), min_size=12, max_size=30),
).map("/".join)


@st.composite
def corrections(draw: st.DrawFn) -> Correction:
    n_refs = draw(st.integers(0, 40))
    numbers = sorted(draw(st.sets(st.integers(1, 99), min_size=n_refs, max_size=n_refs)))
    items: list[CorrectionItem] = []
    for position in range(draw(st.integers(0, 40))):
        cites = (
            tuple(draw(st.lists(st.sampled_from(numbers), unique=True, max_size=4)))
            if numbers
            else ()
        )
        quote = None
        quoted: bool = draw(st.booleans())
        if numbers and quoted:
            quote = CorrectionQuote(draw(_words), reference=draw(st.sampled_from(numbers)))
        items.append(
            CorrectionItem(
                claim_number=position + 1,
                claim=draw(_words),
                label=draw(st.sampled_from(list(Label))),
                explanation=draw(_words),
                references=cites,
                quote=quote,
            )
        )
    cited = {n for item in items for n in item.cited}
    references = tuple(
        Reference(n, f"doc{n}", f"https://pub{n}.example.org/{draw(_path)}", draw(_words))
        for n in numbers
        if n in cited
    )
    label = draw(st.sampled_from(list(Label)))
    note = draw(
        st.sampled_from(
            ["", "(2 claims were checked but not shown: its evidence did not pass the check.)"]
        )
    )
    return Correction(label, OPENING[label], tuple(items), note, references)


def _unbold(token: str) -> str:
    return token.removeprefix("**").removesuffix("**")  # the markdown headline is bold


def _tokens_allowed(out: str, full: str, headline: str) -> None:
    known = {_unbold(t) for t in full.split()} | set(omission_line(99).split()) | {"claim", "was"}
    head_words = headline.split()
    for token in out.split():
        token = _unbold(token)
        if token in known or re.fullmatch(r"\(\d+", token):
            continue
        # Only the headline may be cut, at a word, and marked "…".
        assert token.endswith("…"), token
        assert any(token[:-1] == w.rstrip(".,;:—-") for w in head_words), token


def _omitted(out: str) -> int:
    found = re.findall(r"\((\d+) more claims? (?:were|was) checked; see the full check\.\)", out)
    assert len(found) <= 1
    return int(found[0]) if found else 0


@SETTINGS
@given(corrections(), st.integers(MIN_BUDGET, 279))
def test_plain_fits_every_budget_without_cutting(correction: Correction, small: int) -> None:
    full = render_plain(correction, budget=None)
    urls = {r.url: r.number for r in correction.references}
    for budget in (small, *BUDGETS):
        out = render_plain(correction, budget=budget)
        assert len(out) <= budget
        listed = {int(n) for n in re.findall(r"^\[(\d+)\] ", out, re.MULTILINE)}
        for url in re.findall(r"https?://\S+", out):
            assert url in urls and urls[url] in listed  # whole, and one of the references
        assert set(map(int, re.findall(r"\[(\d+)\]", out))) <= listed
        _tokens_allowed(out, full, correction.headline)
        shown = [line for line in out.splitlines() if line.startswith("Claim ")]
        kept = len(shown)
        assert shown == [item.text for item in correction.items[:kept]]
        assert _omitted(out) == len(correction.items) - kept
        cited = {n for item in correction.items[:kept] for n in item.cited}
        assert listed == cited  # the references of dropped items went with them, no others
        if budget >= len(full):
            assert out == full


def _hrefs(markdown: str) -> list[str]:
    tokens = MarkdownIt("commonmark").parse(markdown)
    return [
        str(child.attrs["href"])
        for token in tokens
        for child in token.children or []
        if child.type == "link_open"
    ]


@SETTINGS
@given(corrections(), st.integers(MIN_BUDGET, 279))
def test_markdown_fits_every_budget_and_links_only_references(
    correction: Correction, small: int
) -> None:
    full = render_markdown(correction, budget=None)
    destinations = {markdown_url(r.url): r.number for r in correction.references}
    for budget in (small, *BUDGETS):
        out = render_markdown(correction, budget=budget)
        assert len(out) <= budget
        listed = {int(n) for n in re.findall(r"^- \[(\d+)\] \[", out, re.MULTILINE)}
        hrefs = _hrefs(out)
        assert len(hrefs) == len(listed)
        for href in hrefs:
            assert href in destinations and destinations[href] in listed
        assert "://" not in markdown_without_reference_links(out, correction)
        # A marker is an unescaped [n] that is not the text of a reference's link.
        assert set(map(int, re.findall(r"(?<!\\)\[(\d+)\](?!\()", out))) <= listed
        _tokens_allowed(out, full, correction.headline)
        kept = len(re.findall(r"^- \*\*Claim ", out, re.MULTILINE))
        assert _omitted(out) == len(correction.items) - kept
        if budget >= len(full):
            assert out == full
