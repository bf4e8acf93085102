from __future__ import annotations

import json

from bots.render import check_to_json, render_text
from pipeline.records.domain import (
    Check,
    Claim,
    Correction,
    CorrectionItem,
    CorrectionQuote,
    Label,
    Post,
    Reference,
    Verdict,
)


def test_check_json_keeps_text_and_references_and_adds_structure() -> None:
    correction = Correction(
        label=Label.FALSE,
        headline="This post is false.",
        items=(
            CorrectionItem(2, "X.", Label.FALSE, "Wrong.", (1,), CorrectionQuote("It is not.", 1)),
        ),
        note="(1 claim was checked but not shown.)",
        references=(Reference(1, "d1", "https://example.org/a", "A"),),
    )
    check = Check(
        id="k",
        post=Post(id="p", platform="cli", platform_id="p", text="X."),
        claims=(),
        evidence=(),
        verdict=Verdict(Label.FALSE, ()),
        correction=correction,
    )
    data = json.loads(json.dumps(check_to_json(check)))["correction"]
    assert data["text"] == correction.text
    assert data["references"] == [
        {"number": 1, "url": "https://example.org/a", "title": "A", "document_id": "d1"}
    ]
    assert data["headline"] == "This post is false." and data["label"] == "false"
    assert data["note"] == correction.note
    assert data["items"] == [
        {
            "claim_number": 2,
            "claim": "X.",
            "label": "false",
            "explanation": "Wrong.",
            "references": [1],
            "quote": {"text": "It is not.", "reference": 1},
        }
    ]
    assert render_text(check).startswith(correction.text)


def test_the_check_says_which_language_it_read_and_replied_in_and_why() -> None:
    def check(post: str | None, reply: str) -> Check:
        return Check(
            id="k",
            post=Post(id="p", platform="cli", platform_id="p", text="X.", language=post),
            claims=(Claim("c1", "p", 0, "X.", language=post), Claim("c2", "p", 1, "Y.", "es")),
            evidence=(),
            verdict=Verdict(Label.UNVERIFIABLE, ()),
            correction=Correction(Label.UNVERIFIABLE, "…", language=reply),
        )

    hindi = check_to_json(check("hi", "hi"))
    assert hindi["language"]["reply_reason"] == "post language"
    assert hindi["language"]["claims"] == {"c2": "es"}  # only the claim whose language differs
    assert [c["language"] for c in hindi["claims"]] == ["hi", "es"]
    assert "Language: the post reads as Hindi (hi); the reply is in the post's language" in (
        render_text(check("hi", "hi"))
    )
    swahili = check_to_json(check("sw", "en"))["language"]
    assert (swahili["post_name"], swahili["reply_reason"]) == ("Swahili", "no catalogue")
    for unknown in ("und", None):
        told = check_to_json(check(unknown, "en"))["language"]
        assert (told["post"], told["reply_reason"]) == ("und", "undetermined")
    assert check_to_json(check("zh-Hant", "zh"))["language"]["reply_reason"] == "post language"
