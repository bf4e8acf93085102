from __future__ import annotations

import json
import re

import pytest
from markdown_it import MarkdownIt

from pipeline.records.domain import Correction, CorrectionItem, CorrectionQuote, Label, Reference
from pipeline.reply.render import (
    MIN_BUDGET,
    Fitted,
    fit,
    markdown_url,
    omission_line,
    render_json,
    render_markdown,
    render_plain,
)
from pipeline.reply.writer import OPENING


def _ref(n: int, url: str | None = None) -> Reference:
    return Reference(n, f"doc{n}", url or f"https://pub{n}.example.org/story/{n}", f"Story {n}")


def _item(n: int, refs: tuple[int, ...], *, words: int = 8) -> CorrectionItem:
    return CorrectionItem(
        claim_number=n,
        claim=f"claim number {n} says something",
        label=Label.FALSE,
        explanation=" ".join(["evidence"] * words) + ".",
        references=refs,
    )


def _correction(*items: CorrectionItem, note: str = "", refs: int = 4) -> Correction:
    return Correction(
        label=Label.FALSE,
        headline=OPENING[Label.FALSE],
        items=items,
        note=note,
        references=tuple(_ref(n) for n in range(1, refs + 1)),
    )


THREE = _correction(_item(1, (1,)), _item(2, (1, 2)), _item(3, (3,)), refs=3)


def test_plain_without_budget_is_the_text_then_the_references() -> None:
    plain = render_plain(THREE, budget=None)
    refs = "\n".join(f"[{r.number}] {r.title} — {r.url}" for r in THREE.references)
    assert plain == f"{THREE.text}\n{refs}"
    assert "more claim" not in plain


def test_item_text_keeps_the_writers_format() -> None:
    quoted = CorrectionItem(
        2, "x", Label.FALSE, "Because.", (1, 2), CorrectionQuote("said so", reference=3)
    )
    assert quoted.text == 'Claim 2, "x": false. Because. [1] [2] Source: "said so" [3]'
    assert quoted.cited == (1, 2, 3)
    nearest = CorrectionItem(1, "y", Label.UNVERIFIABLE, "No fact-check settles it.", (4,))
    assert nearest.text == (
        'Claim 1, "y": unverifiable. No fact-check settles it; '
        "the most relevant source found is [4]."
    )


def test_budget_drops_whole_items_from_the_end_with_their_own_references() -> None:
    full = render_plain(THREE, budget=None)
    two = render_plain(THREE, budget=len(full) - 1)
    assert len(two) <= len(full) - 1
    assert two.splitlines() == [
        THREE.headline,
        THREE.items[0].text,
        THREE.items[1].text,
        f"[1] Story 1 — {_ref(1).url}",
        f"[2] Story 2 — {_ref(2).url}",
        "(1 more claim was checked; see the full check.)",
    ]
    # Reference 1 is shared by items 1 and 2: it stays while either is shown.
    one = render_plain(THREE, budget=len(two) - 1)
    assert one.splitlines()[1:] == [
        THREE.items[0].text,
        f"[1] Story 1 — {_ref(1).url}",
        "(2 more claims were checked; see the full check.)",
    ]


def test_the_note_goes_before_any_item() -> None:
    note = (
        "(1 claim was checked but not shown: its evidence did not pass factbot's citation check.)"
    )
    correction = _correction(_item(1, (1,)), note=note, refs=1)
    full = render_plain(correction, budget=None)
    assert note in full
    fitted = render_plain(correction, budget=len(full) - 1)
    assert note not in fitted and correction.items[0].text in fitted
    assert "more claim" not in fitted  # no item was left out


def test_omission_line_is_counted_in_the_budget() -> None:
    correction = _correction(*(_item(n, (n,), words=30) for n in range(1, 5)), refs=4)
    for budget in range(MIN_BUDGET, len(render_plain(correction, budget=None)), 7):
        out = render_plain(correction, budget=budget)
        assert len(out) <= budget
        assert out.splitlines()[0] == correction.headline


def test_headline_is_shortened_at_a_word_only_when_nothing_else_fits() -> None:
    headline = OPENING[Label.UNVERIFIABLE]
    correction = Correction(
        label=Label.UNVERIFIABLE,
        headline=headline,
        items=(CorrectionItem(1, "c", Label.UNVERIFIABLE, "No fact-check settles it.", (1,)),),
        references=(_ref(1),),
    )
    out = render_plain(correction, budget=MIN_BUDGET)
    first, last = out.splitlines()
    assert len(out) <= MIN_BUDGET
    assert first.endswith("…") and headline.startswith(first[:-1])
    assert re.match(re.escape(first[:-1]) + r"[.,;:]*\s", headline)  # cut at a word's end
    assert last == omission_line(1)
    # Never below the verdict clause, "This post is unverifiable".
    assert len(first) >= len("This post is unverifiable…")


def test_a_budget_below_the_minimum_is_refused() -> None:
    with pytest.raises(ValueError, match="below"):
        render_plain(THREE, budget=MIN_BUDGET - 1)
    tiny = Correction(label=Label.FALSE, headline="This post is false.")
    assert render_plain(tiny, budget=30) == "This post is false."  # it fits: nothing to refuse


def test_references_keep_their_numbers() -> None:
    sparse = Correction(
        label=Label.FALSE,
        headline=OPENING[Label.FALSE],
        items=(_item(1, (7,)), _item(3, (2, 7))),
        references=(_ref(2), _ref(7)),
    )
    out = render_plain(sparse, budget=None)
    assert "[7] Story 7" in out and "[2] Story 2" in out and "[1]" not in out


def test_an_old_text_only_correction_lists_references_its_text_marks() -> None:
    text = 'This post is false. [1]\nClaim 1, "x": false. Because. [2]'
    legacy = Correction(label=Label.FALSE, headline=text, references=(_ref(1), _ref(2)))
    assert legacy.text == text
    assert render_plain(legacy, budget=None) == (
        f"{text}\n[1] Story 1 — {_ref(1).url}\n[2] Story 2 — {_ref(2).url}"
    )
    # Shortened past marker [2], its reference goes too; [1] still shows, so it stays.
    short = render_plain(legacy, budget=MIN_BUDGET)
    assert "[2]" not in short and f"[1] Story 1 — {_ref(1).url}" in short


def test_fit_takes_a_platforms_own_measure() -> None:
    # A platform that counts only item lines (say, one embed field per item).
    def measure(part: Fitted) -> int:
        return 100 * len(part.items)

    part = fit(THREE, budget=MIN_BUDGET + 100, measure=measure)
    assert [i.claim_number for i in part.items] == [1, 2]
    assert part.omitted == 1 and part.omission == omission_line(1)
    assert [r.number for r in part.references] == [1, 2]


def _links(markdown: str) -> list[str]:
    tokens = MarkdownIt("commonmark").parse(markdown)
    return [
        child.attrs["href"]  # type: ignore[misc]
        for token in tokens
        for child in token.children or []
        if child.type == "link_open"
    ]


def _count(markdown: str, kind: str) -> int:
    tokens = MarkdownIt("commonmark").parse(markdown)
    return sum(1 for t in tokens for c in t.children or [] if c.type == kind)


def test_markdown_links_only_the_references() -> None:
    hostile = CorrectionItem(
        claim_number=1,
        claim="[click me](https://evil.example/x) ![img](javascript:alert(1)) <https://evil.test>",
        label=Label.FALSE,
        explanation="**bold** _it_ `code` ~~gone~~ <b>html</b> [1](http://evil.example) | &amp;",
        references=(1,),
        quote=CorrectionQuote("see [here](https://evil.example) *now*", reference=1),
    )
    url = "https://pub.example.org/a_(b)/c"
    correction = Correction(
        label=Label.FALSE,
        headline=OPENING[Label.FALSE],
        items=(hostile,),
        references=(Reference(1, "d", url, "A [title](https://evil.example) *x*"),),
    )
    md = render_markdown(correction, budget=None)
    assert _links(md) == [markdown_url(url)]
    assert "evil" not in md  # scrubbed, not merely escaped
    assert _count(md, "strong_open") == 3  # headline, "Claim 1" and the label: ours only
    for kind in ("em_open", "code_inline", "html_inline", "image", "s_open"):
        assert _count(md, kind) == 0


def test_markdown_fits_like_plain() -> None:
    full = render_markdown(THREE, budget=None)
    out = render_markdown(THREE, budget=len(full) - 1)
    assert len(out) < len(full)
    assert out.endswith(omission_line(1))
    assert "Claim 3" not in out and markdown_url(_ref(3).url) not in out


def test_json_is_structured_and_complete() -> None:
    data = render_json(THREE)
    json.dumps(data)
    assert data["headline"] == THREE.headline and data["text"] == THREE.text
    assert data["label"] == "false" and data["note"] == ""
    assert data["items"][1] == {
        "claim_number": 2,
        "claim": THREE.items[1].claim,
        "label": "false",
        "explanation": THREE.items[1].explanation,
        "references": [1, 2],
        "quote": None,
    }
    assert [r["number"] for r in data["references"]] == [1, 2, 3]
