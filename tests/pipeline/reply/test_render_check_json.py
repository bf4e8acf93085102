from __future__ import annotations

import json

from bots.render import check_to_json, render_text
from pipeline.records.domain import (
    Check,
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
