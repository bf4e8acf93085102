"""`python -m bench.english_claims` on a few claims: the counts it reports add up."""

from __future__ import annotations

from bench.english_claims import run
from pipeline.inputs.language import LanguageIdentifier


def test_the_bench_counts_the_claims_not_read_as_english() -> None:
    claims = [
        "Fanta was invented by the Nazis.",
        "The governor signed the bill on Tuesday.",
        "El gobierno subió los impuestos.",  # Spanish: counted, as it should be
        "xq",  # no word of any language: und
        "",
    ]
    figures = run(claims, LanguageIdentifier(low_accuracy=True))
    assert figures["claims"] == 4
    assert figures["not_english"] == 2
    assert figures["codes"] == {"es": 1, "und": 1}
    assert [m["text"] for m in figures["misread"]] == [claims[2], claims[3]]
