"""The Discord embed of an answer: within every Discord limit, escaped, only reference links."""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from bots.platforms.discord import _render
from bots.platforms.discord._render import DiscordReply, render
from bots.runtime.platform.contract import Answer, Destination
from pipeline.records.domain import Correction, CorrectionItem, CorrectionQuote, Label, Reference

DEST = Destination("discord", "10", "20", message_id="40", public={"event_key": "50"})
NASTY = (
    "@everyone @here <@123> <@&456> <#789> **bold** __u__ `code` ||spoiler|| # head > q "
    "[x](https://evil.example/p) ~~s~~ \\ "
)
TOKENS = [*"abcdefgh ijk@#<>*_`|~[]()\\:/.-\n", "é", "😀", "https://a.example/x ", "@everyone "]
words = st.lists(st.sampled_from(TOKENS), max_size=1500).map("".join)


def _correction(n_items: int, n_refs: int, text: str) -> Correction:
    refs = tuple(
        Reference(
            i,
            f"d{i}",
            f"https://news{i}.example/story/{i}?q={'a' * (i % 7) * 30}",
            f"{text[:90]} title {i}",
        )
        for i in range(1, n_refs + 1)
    )
    items = tuple(
        CorrectionItem(
            claim_number=i,
            claim=f"{text[:400]} claim {i}",
            label=list(Label)[i % 5],
            explanation=f"{text} explanation {i}",
            references=tuple(sorted({1 + (i + k) % n_refs for k in range(3)})) if n_refs else (),
            quote=CorrectionQuote(text[:600] or "q", 1 + i % n_refs) if n_refs else None,
        )
        for i in range(1, n_items + 1)
    )
    return Correction(
        label=Label.FALSE,
        headline=f"This post is false: {text[:2000]}",
        items=items,
        note=text[:300],
        references=refs,
    )


def _check_limits(embed: dict) -> None:
    assert len(embed["title"]) <= _render.TITLE
    assert len(embed["description"]) <= _render.DESCRIPTION
    assert len(embed["fields"]) <= _render.FIELDS
    for field in embed["fields"]:
        assert 0 < len(field["name"]) <= _render.FIELD_NAME
        assert 0 < len(field["value"]) <= _render.FIELD_VALUE
    assert len(embed.get("footer", {}).get("text", "")) <= _render.FOOTER
    assert _render.embed_length(embed) <= _render.EMBED_TOTAL


def _links(text: str) -> list[str]:
    """The destinations of markdown links: a `](` whose `]` is not escaped by a backslash."""
    return re.findall(r"(?<!\\)(?:\\\\)*\]\(([^)]*)\)", text)


@settings(max_examples=60, deadline=None)
@given(
    n_items=st.integers(0, 25),
    n_refs=st.integers(0, 60),
    text=words,
    footer=st.one_of(st.none(), st.text(max_size=3000)),
)
@example(n_items=0, n_refs=0, text="](", footer=None)  # an escaped `]` before `(` is no link
def test_any_correction_renders_within_every_discord_limit(
    n_items: int, n_refs: int, text: str, footer: str | None
) -> None:
    correction = _correction(n_items, n_refs, text)
    answer = Answer(
        kind="correction",
        correction=correction,
        footer=footer,
        notes=("The attachment 'x.pdf' could not be read: it is not an image.",),
        report_url="https://factbot.example/checks/abc",
    )
    rendered = render(answer, DEST)
    reply = rendered.payload
    assert isinstance(reply, DiscordReply)
    assert reply.embed is not None
    _check_limits(reply.embed)
    allowed = {_render.markdown_url(r.url) for r in correction.references}
    allowed.add("https://factbot.example/checks/abc")
    for part in rendered.texts:
        assert set(_links(part)) <= allowed
    assert reply.body()["allowed_mentions"] == {"parse": []}
    assert len(reply.nonce) <= 25
    assert len(reply.thread_name) <= _render.THREAD_NAME


def test_a_long_correction_says_what_it_left_out_and_keeps_the_references_it_shows() -> None:
    correction = _correction(20, 40, "word " * 400)
    embed = render(Answer(kind="correction", correction=correction), DEST).payload.embed
    _check_limits(embed)
    shown = len(embed["fields"])
    assert 0 < shown < 20
    assert f"({20 - shown} more claims were checked; see the full check.)" in embed["description"]
    cited = {int(n) for f in embed["fields"] for n in re.findall(r"\[(\d+)\]", f["value"])}
    listed = {int(n) for n in re.findall(r"^\[(\d+)\] \[", embed["description"], re.MULTILINE)}
    assert cited <= listed


def test_post_text_cannot_format_link_or_mention() -> None:
    correction = Correction(
        label=Label.MISLEADING,
        headline="This post is misleading.",
        items=(CorrectionItem(1, NASTY, Label.MISLEADING, NASTY, (1,), CorrectionQuote(NASTY, 1)),),
        references=(Reference(1, "d1", "https://ok.example/a_(b)", f"{NASTY} title"),),
    )
    embed = render(Answer(kind="correction", correction=correction), DEST).payload.embed
    field = embed["fields"][0]
    assert field["name"] == "Claim 1 — misleading"
    value = field["value"]
    assert "@everyone" not in value and "@here" not in value
    assert "<@123>" not in value and "<#789>" not in value
    assert "**bold**" not in value and "https://evil.example" not in value
    assert _links(embed["description"]) == ["https://ok.example/a_%28b%29"]
    assert embed["color"] == _render.COLOURS[Label.MISLEADING]
    assert embed["title"] == "Misleading"


def test_colours_per_verdict() -> None:
    assert _render.COLOURS[Label.ACCURATE] == 0x2ECC71
    assert _render.COLOURS[Label.FALSE] == 0xE74C3C
    assert _render.COLOURS[Label.UNVERIFIABLE] == 0x95A5A6


def test_other_answers_are_short_texts_and_private_when_asked() -> None:
    answer = Answer(
        kind="refusal", message="You have asked for many checks; try later.", private=True
    )
    rendered = render(answer, DEST)
    assert rendered.payload.private and rendered.payload.embed is None
    assert rendered.payload.content == "You have asked for many checks; try later."
    assert rendered.texts == (rendered.payload.content,)


def test_nonce_is_one_per_request() -> None:
    other = Destination("discord", "10", "20", message_id="40", public={"event_key": "51"})
    assert _render.nonce_for(DEST) == _render.nonce_for(DEST)
    assert len(_render.nonce_for(DEST)) == 25
    assert _render.nonce_for(DEST) != _render.nonce_for(other)


def test_nonce_comes_from_the_reply_key_when_the_reply_job_gives_one() -> None:
    keyed = Destination(
        "discord", "10", "20", message_id="40", public={"event_key": "50", "reply_key": "k1"}
    )
    other = Destination(
        "discord", "10", "20", message_id="40", public={"event_key": "50", "reply_key": "k2"}
    )
    assert _render.nonce_for(keyed) != _render.nonce_for(other)
    assert _render.nonce_for(keyed) != _render.nonce_for(DEST)
