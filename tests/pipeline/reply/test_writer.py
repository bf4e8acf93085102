from __future__ import annotations

import dataclasses

import pytest

from pipeline.records.domain import (
    Basis,
    Claim,
    ClaimVerdict,
    Correction,
    CorrectionItem,
    CorrectionQuote,
    Document,
    Evidence,
    Label,
    Passage,
    Quote,
    Reference,
    Stance,
    Tier,
    Verdict,
    document_id_for,
)
from pipeline.reply.writer import OPENING, verify_references, write_correction
from pipeline.util.i18n import translator


def _evidence(eid: str, claim_id: str, url: str, stance: Stance = Stance.REFUTES) -> Evidence:
    doc = Document(
        id=document_id_for(url),
        url=url,
        domain="example.org",
        title=f"Title of {url.rsplit('/', 1)[-1]} see www.evil.example",
        text="The passage text.",
    )
    return Evidence(
        id=eid,
        claim_id=claim_id,
        passage=Passage(id=f"p-{eid}", document_id=doc.id, position=0, text="The passage text."),
        document=doc,
        relevance=0.9,
        tier=Tier.HIGH,
        stance=stance,
    )


CLAIMS = [
    Claim("c1", "p", 0, "Bleach cures  COVID-19, see https://evil.example/buy"),
    Claim("c2", "p", 1, "The hidden claim."),
    Claim("c3", "p", 2, "Nobody knows about this."),
    Claim("c4", "p", 3, "Masks work " + "very " * 60 + "well."),
]
EVIDENCE = [
    _evidence("e1", "c1", "https://who.example.org/bleach"),
    _evidence("e2", "c1", "https://fda.example.org/bleach"),
    _evidence("e3", "c3", "https://news.example.org/unknown", Stance.CONTEXT),
    _evidence("e4", "c4", "https://who.example.org/bleach", Stance.SUPPORTS),  # same document
]
VERDICT = Verdict(
    label=Label.FALSE,
    claims=(
        ClaimVerdict("c1", Label.FALSE, "Health agencies warn against it.", ("e1", "e2")),
        ClaimVerdict("c2", Label.FALSE, "Hidden.", ("e1",), shown=False),
        ClaimVerdict("c3", Label.UNVERIFIABLE, "", ("e3",)),
        ClaimVerdict("c4", Label.ACCURATE, "Studies agree.", ("e4",)),
    ),
)
QUOTES = [Quote("e2", "Drinking bleach is dangerous and does not cure anything.", Stance.REFUTES)]


async def test_the_correction_is_structured_per_shown_claim() -> None:
    correction = await write_correction(CLAIMS, VERDICT, EVIDENCE, quotes=QUOTES)
    assert correction.label is Label.FALSE and correction.headline == OPENING[Label.FALSE]
    first, unknown, masks = correction.items
    # Numbers are positions in the post: the hidden claim 2 keeps its place.
    assert [i.claim_number for i in correction.items] == [1, 3, 4]
    assert first.claim == "Bleach cures COVID-19, see [link removed]"
    assert first.explanation == "Health agencies warn against it."
    assert first.references == (1, 2)
    assert first.quote == CorrectionQuote(QUOTES[0].text, reference=2, stance=QUOTES[0].stance)
    assert unknown.label is Label.UNVERIFIABLE and unknown.references == (3,)
    assert masks.references == (1,)  # the WHO document keeps its number
    assert len(masks.claim) <= 140 and masks.claim.endswith("…")
    assert correction.note.startswith("(1 claim was checked but not shown")
    assert [r.number for r in correction.references] == [1, 2, 3]
    assert all("evil" not in r.title for r in correction.references)


async def test_the_text_is_the_full_uncut_writing() -> None:
    correction = await write_correction(CLAIMS, VERDICT, EVIDENCE, quotes=QUOTES)
    lines = correction.text.splitlines()
    assert lines[0] == "This post is false."
    assert lines[1] == (
        'Claim 1, "Bleach cures COVID-19, see [link removed]": false. Health agencies warn '
        'against it. [1] [2] Source: "Drinking bleach is dangerous and does not cure anything." [2]'
    )
    assert lines[2] == (
        'Claim 3, "Nobody knows about this.": unverifiable. No fact-check settles it; '
        "the most relevant source found is [3]."
    )
    assert lines[3].endswith('": accurate. Studies agree. [1]')
    assert lines[4] == (
        "(1 claim was checked but not shown: its evidence did not pass factbot's citation check.)"
    )
    # Many claims are never cut: fitting is the renderers' job.
    many = [Claim(f"m{n}", "p", n, f"Claim text number {n} " * 5) for n in range(40)]
    verdict = Verdict(
        Label.FALSE, tuple(ClaimVerdict(c.id, Label.FALSE, "Wrong. " * 20) for c in many)
    )
    long = await write_correction(many, verdict, [])
    assert len(long.text) > 10_000 and len(long.items) == 40


async def test_an_unsupported_claim_without_evidence_says_so() -> None:
    verdict = Verdict(Label.UNVERIFIABLE, (ClaimVerdict("c3", Label.UNVERIFIABLE, ""),))
    correction = await write_correction([CLAIMS[2]], verdict, [])
    assert correction.items[0].explanation == "No credible evidence about it was found."
    assert correction.references == ()
    assert correction.text.endswith(": unverifiable. No credible evidence about it was found.")


async def test_verify_references_rejects_what_was_not_retrieved() -> None:
    correction = await write_correction(CLAIMS, VERDICT, EVIDENCE, quotes=QUOTES)
    verify_references(correction, EVIDENCE)
    with pytest.raises(ValueError, match="not a retrieved document"):
        verify_references(correction, EVIDENCE[2:])
    item = correction.items[0]
    with pytest.raises(ValueError, match="unretrieved URL"):
        bad = dataclasses.replace(item, explanation="Read https://evil.example/x instead.")
        verify_references(dataclasses.replace(correction, items=(bad,)), EVIDENCE)
    with pytest.raises(ValueError, match="unlisted references"):
        stray = dataclasses.replace(item, quote=CorrectionQuote("q", reference=9))
        verify_references(dataclasses.replace(correction, items=(stray,)), EVIDENCE)


def test_verify_references_checks_the_renderings_not_only_the_text() -> None:
    url = "https://who.example.org/bleach"
    # Only the rendered reference list shows a title; `text` never does.
    ref = Reference(1, document_id_for(url), url, "Mirror at https://evil.example/x")
    correction = Correction(
        label=Label.FALSE,
        headline="This post is false.",
        items=(CorrectionItem(1, "c", Label.FALSE, "Wrong.", (1,)),),
        references=(ref,),
    )
    assert "evil" not in correction.text
    with pytest.raises(ValueError, match="unretrieved URL"):
        verify_references(correction, EVIDENCE[:1])
    verify_references(
        dataclasses.replace(correction, references=(dataclasses.replace(ref, title="WHO"),)),
        EVIDENCE[:1],
    )


@pytest.mark.parametrize(
    ("basis", "says"),
    [
        (Basis.NO_EVIDENCE, "No credible evidence about it was found."),
        (Basis.CONTESTED, "Credible sources about it disagree."),
        (Basis.REPORTS, "The sources found only report or repeat it; none confirms or refutes it."),
        (Basis.VERIFIER, "Sources about it were found, but none says clearly whether it is true."),
    ],
)
async def test_a_claim_left_open_says_why(basis: Basis, says: str) -> None:
    """Issue 51: evidence found but vetoed was answered "No credible evidence … was found"."""
    verdict = Verdict(
        Label.UNVERIFIABLE, (ClaimVerdict("c3", Label.UNVERIFIABLE, "", basis=basis),)
    )
    correction = await write_correction([CLAIMS[2]], verdict, [])
    assert correction.items[0].explanation == says
    for code in ("es", "pt", "fr", "de", "ar", "hi", "zh"):
        other = await write_correction([CLAIMS[2]], verdict, [], language=translator(code))
        assert other.items[0].explanation not in ("", says), code
