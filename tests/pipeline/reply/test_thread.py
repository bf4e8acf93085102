"""Corrections as threads of short posts: budgets by each platform's measure, nothing cut."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pipeline.records.domain import Correction, CorrectionItem, Label, Reference
from pipeline.reply.render import omission_line
from pipeline.reply.thread import (
    defuse_mentions,
    graphemes,
    render_thread,
    thread_text,
    url_weighted,
    x_weighted,
)
from pipeline.reply.writer import OPENING
from tests.pipeline.reply.test_render_properties import SETTINGS, corrections

_NUMBER_RE = re.compile(r" \((\d)/(\d)\)$")


def _correction(claims: int, *, words: int = 30) -> Correction:
    items = tuple(
        CorrectionItem(
            claim_number=n,
            claim=f"claim {n} says the bridge opened in 19{n}0",
            label=Label.FALSE,
            explanation=" ".join(["records show it opened much later than that"] * (words // 8)),
            references=(n,),
        )
        for n in range(1, claims + 1)
    )
    refs = tuple(
        Reference(n, f"doc{n}", f"https://news{n}.example.org/2026/bridge-{n}", f"Title {n}")
        for n in range(1, claims + 1)
    )
    return Correction(Label.FALSE, OPENING[Label.FALSE], items, "", refs)


def _strip_number(post: str) -> str:
    return _NUMBER_RE.sub("", post)


def test_a_short_correction_is_one_unnumbered_post() -> None:
    correction = _correction(1, words=8)
    posts = render_thread(correction, budget=500, measure=url_weighted)
    assert len(posts) == 1
    assert not _NUMBER_RE.search(posts[0])
    assert "[1] https://news1.example.org/2026/bridge-1" in posts[0]


def test_a_long_correction_is_a_numbered_thread_within_the_budget() -> None:
    correction = _correction(3)
    posts = render_thread(correction, budget=280, measure=x_weighted, max_posts=6)
    assert len(posts) > 1
    for k, post in enumerate(posts, start=1):
        assert x_weighted(post) <= 280
        assert _NUMBER_RE.search(post).groups() == (str(k), str(len(posts)))  # type: ignore[union-attr]
    text = "\n".join(_strip_number(p) for p in posts)
    for ref in correction.references:
        assert sum(ref.url in p for p in posts) == 1  # whole, in exactly one post
    # No word is cut: the words of the thread are the words of the blocks, in order.
    expected = " ".join([correction.headline, *(i.text for i in correction.items)]).split()
    assert text.split()[: len(expected)] == expected


def test_too_many_posts_drop_claims_from_the_end_with_their_references() -> None:
    correction = _correction(4)
    posts = render_thread(correction, budget=280, measure=x_weighted, max_posts=2)
    assert len(posts) <= 2
    text = "\n".join(posts)
    kept = [
        i
        for i in correction.items
        if i.text.split()[0] in text and f"claim {i.claim_number} " in text
    ]
    assert 0 < len(kept) < 4
    assert (
        omission_line(4 - len(kept)) in text.replace("\n", " ")
        or omission_line(4 - len(kept)) in text
    )
    for ref in correction.references:
        assert (ref.url in text) == (ref.number <= len(kept))


def test_links_per_reply_bound_the_references() -> None:
    correction = _correction(3, words=8)
    posts = render_thread(correction, budget=500, measure=url_weighted, max_links=1)
    text = "\n".join(posts)
    assert len(re.findall(r"https://", text)) == 1
    assert "claim 2 says" not in text
    assert omission_line(2) in text
    none = render_thread(correction, budget=500, measure=url_weighted, max_links=0)
    assert "https://" not in "\n".join(none) and omission_line(3) in "\n".join(none)


def test_extras_come_last_and_whole() -> None:
    correction = _correction(2, words=8)
    extras = ("Full report: https://factbot.example/checks/abc", "Checked in 3 s for $0.0012")
    posts = render_thread(correction, budget=280, measure=x_weighted, extras=extras)
    assert _strip_number(posts[-1]).endswith(extras[1])
    assert sum(extras[0] in p for p in posts) == 1


def test_post_and_page_text_can_neither_link_nor_mention() -> None:
    item = CorrectionItem(
        claim_number=1,
        claim="@everyone read evil.example now, says @someone (mail a@b.org)",
        label=Label.FALSE,
        explanation="See https://evil.example/x for proof ＠fullwidth",
        references=(1,),
    )
    ref = Reference(1, "d", "https://apnews.com/article/1", "AP")
    correction = Correction(Label.FALSE, OPENING[Label.FALSE], (item,), "", (ref,))
    (post,) = render_thread(correction, budget=500, measure=url_weighted)
    assert "evil.example" not in post
    assert re.search(r"(?<![\w@])[@＠]\w", post) is None  # every handle defused
    assert "a@b.org" not in post or "@\u2060" not in "a@b.org"
    assert "https://apnews.com/article/1" in post


def test_a_reference_url_longer_than_a_post_drops_its_claim_not_the_url() -> None:
    long_url = "https://pub.example.org/" + "a" * 400
    items = (
        CorrectionItem(1, "short claim one", Label.FALSE, "wrong", (1,)),
        CorrectionItem(2, "short claim two", Label.FALSE, "wrong", (2,)),
    )
    refs = (
        Reference(1, "d1", "https://pub.example.org/ok", "t"),
        Reference(2, "d2", long_url, "t"),
    )
    correction = Correction(Label.FALSE, OPENING[Label.FALSE], items, "", refs)
    posts = render_thread(correction, budget=300, measure=graphemes)
    text = "\n".join(posts)
    assert long_url not in text and "pub.example.org/aaa" not in text
    assert "short claim one" in text and omission_line(1) in text


def test_measures_count_as_the_platforms_do() -> None:
    assert url_weighted("see https://example.org/" + "a" * 100) == 4 + 23
    assert x_weighted("日本語") == 6
    assert x_weighted("abc 🙂") == 6
    assert x_weighted("https://example.org/long/path abc") == 23 + 4
    assert graphemes("👨‍👩‍👧 é") == 3  # a family emoji, a space, e + combining accent
    assert defuse_mentions("hi @bob and me@mail.org") == "hi @\u2060bob and me@mail.org"


def test_arguments_are_checked() -> None:
    correction = _correction(1)
    with pytest.raises(ValueError, match="max_posts"):
        render_thread(correction, budget=280, max_posts=10)
    with pytest.raises(ValueError, match="verdict"):
        render_thread(correction, budget=10, max_posts=1)


@SETTINGS
@given(
    corrections(),
    st.sampled_from([(280, x_weighted), (300, graphemes), (500, url_weighted)]),
    st.integers(1, 5),
    st.one_of(st.none(), st.integers(0, 6)),
)
def test_every_thread_fits_and_cuts_nothing(
    correction: Correction, platform: tuple[int, object], max_posts: int, max_links: int | None
) -> None:
    budget, measure = platform
    posts = render_thread(
        correction,
        budget=budget,
        measure=measure,
        max_posts=max_posts,
        max_links=max_links,  # type: ignore[arg-type]
    )
    assert 1 <= len(posts) <= max_posts
    urls = {r.url: r.number for r in correction.references}
    listed: set[int] = set()
    for k, post in enumerate(posts, start=1):
        assert measure(post) <= budget  # type: ignore[operator]
        if len(posts) > 1:
            assert post.endswith(f" ({k}/{len(posts)})")
        for line in _strip_number(post).splitlines():
            found = re.fullmatch(r"\[(\d+)\] (https?://\S+)", line)
            if found:
                assert urls[found.group(2)] == int(found.group(1))  # a whole reference URL
                listed.add(int(found.group(1)))
    text = "\n".join(posts)
    assert len(re.findall(r"https?://", text)) == len(listed)  # no other URL anywhere
    if max_links is not None:
        assert len(listed) <= max_links
    kept = sum(f'Claim {i.claim_number}, "' in text for i in correction.items)
    cited = {n for item in correction.items[:kept] for n in item.cited}
    assert listed == cited


def test_a_measure_that_is_not_additive_still_bounds_every_post() -> None:
    def lumpy(text: str) -> int:  # long texts cost extra: sums of parts underestimate
        return len(text) + (40 if len(text) > 150 else 0)

    posts = render_thread(_correction(3), budget=280, measure=lumpy, max_posts=9)
    assert len(posts) > 1 and all(lumpy(p) <= 280 for p in posts)


def test_a_written_text_becomes_a_thread_without_cutting_urls() -> None:
    url = "https://news1.example.org/2026/bridge-1"
    text = (
        "Edited by a reviewer: @someone the bridge opened in 1931, not 1913. " * 8 + f"\n[1] {url}"
    )
    posts = thread_text(text, budget=280, measure=x_weighted)
    assert len(posts) > 1 and all(x_weighted(p) <= 280 for p in posts)
    assert sum(url in p for p in posts) == 1
    assert "@someone" not in "".join(posts)
    assert thread_text("short", budget=280) == ("short",)
    with pytest.raises(ValueError, match="does not fit"):
        thread_text("word " * 400, budget=280, max_posts=2)
