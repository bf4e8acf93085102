"""Answers render as valid Block Kit within Slack's limits, with nothing that pings or links."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from bots.platforms.slack import _render
from bots.runtime.platform.contract import Answer, Destination
from pipeline.records.domain import Correction, CorrectionItem, CorrectionQuote, Label, Reference
from tests.support.fake_slack import block_problem

DEST = Destination(platform="slack", workspace_id="T1", channel_id="C1", message_id="1.2")
PINGS = re.compile(r"<!(?:channel|here|everyone)|<@U|<#C")


def _correction(n: int, text: str, *, url_len: int = 30) -> Correction:
    refs = tuple(
        Reference(
            i, f"d{i}", f"https://news{i}.example/" + "a" * url_len + "?x=1&y=2", f"{text} {i}"
        )
        for i in range(1, n + 1)
    )
    items = tuple(
        CorrectionItem(
            claim_number=i,
            claim=f"{text} claim {i}",
            label=Label.FALSE,
            explanation=f"{text} explanation {i}",
            references=(i,),
            quote=CorrectionQuote(f"{text} quote {i}", i),
        )
        for i in range(1, n + 1)
    )
    return Correction(Label.FALSE, f"This post is false: {text}", items, "", refs)


def _check(rendered: _render.Rendered, correction: Correction) -> None:
    payload = rendered.payload
    assert block_problem(payload["blocks"]) is None
    assert 0 < len(payload["text"]) <= _render.TEXT_CHARS
    for block in payload["blocks"]:
        if block["type"] == "header":
            assert len(block["text"]["text"]) <= _render.HEADER_CHARS
        if block["type"] == "context":
            assert len(block["elements"]) <= _render.CONTEXT_ELEMENTS
        for text in [block.get("text", {}).get("text", "")] + [
            e["text"] for e in block.get("elements", [])
        ]:
            assert not PINGS.search(text), text
            links = re.findall(r"<([^<>|]+)\|", text)
            for link in links:
                assert any(_render.slack_url(r.url) == link for r in correction.references) or (
                    link.startswith("https://factbot.example/")
                )
    assert not PINGS.search(payload["text"])


def test_a_correction_has_a_header_a_section_per_claim_and_linked_references() -> None:
    correction = _correction(2, "x")
    answer = Answer(
        kind="correction",
        correction=correction,
        report_url="https://factbot.example/c/1",
        footer="cost $0.01",
        notes=("The file b.pdf is not an image.",),
    )
    rendered = _render.render(answer, DEST)
    blocks = rendered.payload["blocks"]
    assert blocks[0] == {
        "type": "header",
        "text": {"type": "plain_text", "text": "Fact-check: false"},
    }
    sections = [b["text"]["text"] for b in blocks if b["type"] == "section"]
    assert sections[1].startswith('*Claim 1*, "x claim 1": *false*.\nx explanation 1 [1]')
    assert '> Source: "x quote 1" [1]' in sections[1]
    refs = sections[-1]
    assert refs.startswith("*References*\n[1] <https://news1.example/")
    assert "?x=1&amp;y=2|x 1>" in refs
    context = blocks[-1]["elements"]
    assert context[0]["text"] == "<https://factbot.example/c/1|Full report>"
    assert [e["text"] for e in context[1:]] == ["The file b.pdf is not an image.", "cost $0.01"]
    # The audit sees the original URLs.
    assert any("https://news1.example/" + "a" * 30 + "?x=1&y=2" in t for t in rendered.texts)
    assert rendered.payload["private"] is False
    _check(rendered, correction)


def test_mentions_and_links_from_posts_and_pages_are_inert() -> None:
    nasty = "<!channel> <!here> <@U123> <#C1> & visit https://evil.example now"
    correction = _correction(1, nasty)
    rendered = _render.render(Answer(kind="correction", correction=correction), DEST)
    _check(rendered, correction)
    joined = " ".join(rendered.texts)
    assert "evil.example" not in joined
    assert "&lt;!channel&gt;" in rendered.payload["blocks"][1]["text"]["text"]


def test_a_correction_beyond_the_limits_drops_claims_and_says_so() -> None:
    correction = _correction(60, "word " * 200)
    rendered = _render.render(Answer(kind="correction", correction=correction), DEST)
    _check(rendered, correction)
    context = rendered.payload["blocks"][-1]["elements"]
    assert any("more claims were checked" in e["text"] for e in context)


def test_a_refusal_is_a_private_section() -> None:
    answer = Answer(kind="refusal", message="Too many checks <!here>; try later.", private=True)
    rendered = _render.render(answer, DEST)
    assert rendered.payload["private"] is True
    assert (
        rendered.payload["blocks"][0]["text"]["text"] == "Too many checks &lt;!here&gt;; try later."
    )
    assert rendered.texts[-1] == "Too many checks <!here>; try later."


words = st.lists(
    st.sampled_from([*"ab <>&|!@#*_~`\n", "<!channel>", "<@U1>", "https://x.example/", "&amp;"]),
    max_size=200,
).map("".join)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(min_value=0, max_value=30),
    text=words,
    url_len=st.integers(min_value=0, max_value=1500),
    headline_len=st.integers(min_value=1, max_value=6000),
    note=st.text(max_size=4000),
    notes=st.lists(st.text(min_size=1, max_size=3000), max_size=14),
)
def test_any_correction_renders_within_every_limit(
    n: int, text: str, url_len: int, headline_len: int, note: str, notes: list[str]
) -> None:
    base = _correction(n, text, url_len=url_len)
    correction = Correction(
        base.label, ("x" * headline_len) + text, base.items, note, base.references
    )
    answer = Answer(
        kind="correction",
        correction=correction,
        notes=tuple(notes),
        footer=text or None,
        report_url="https://factbot.example/c/9",
    )
    _check(_render.render(answer, DEST), correction)
