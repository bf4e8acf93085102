"""Languages through a check: each claim keeps its own, and the English-only stance model
never decides a claim it cannot read (real lingua models, the shipped stance model, real SQLite).
"""

from __future__ import annotations

import pytest

from pipeline.checking.languages import decide_readable, identify_claims, identify_post
from pipeline.claims.heuristic import extract_claims
from pipeline.credibility.importers import load_seed
from pipeline.credibility.policy import SourcePolicy
from pipeline.embedding.onnx import OnnxEmbedder
from pipeline.evidence.ingest import Ingester
from pipeline.inputs.language import LanguageIdentifier
from pipeline.inputs.posts import post_from_text
from pipeline.judge.claimreview import ReviewMatchJudge
from pipeline.records.domain import (
    Basis,
    Claim,
    ClaimVerdict,
    Document,
    Evidence,
    Label,
    Passage,
    Stance,
    Tier,
    Verdict,
)
from pipeline.run import CheckConfig, CheckDeps, run_check
from pipeline.verifier.stance import StanceModel
from pipeline.verifier.verdict import Thresholds, VerifierJudge, settle
from storage import Store
from tests.conftest import FIXTURES

PAGE = (
    "The city council met on Monday. The Eiffel Tower is a wrought-iron lattice tower in "
    "Paris, France. It was completed in 1889."
)


@pytest.fixture(scope="module")
def identifier() -> LanguageIdentifier:
    found = LanguageIdentifier()
    found.warm()
    return found


@pytest.fixture(scope="module")
def verifier() -> VerifierJudge:
    return VerifierJudge(StanceModel(), thresholds=Thresholds())


def _evidence(n: int, text: str, claim: str) -> Evidence:
    doc = Document(id=f"d{n}", url=f"https://news{n}.example/a", domain=f"news{n}.example",
                   title="t", text=text)  # fmt: skip
    return Evidence(id=f"e{n}", claim_id=claim, passage=Passage(f"p{n}", doc.id, 0, text),
                    document=doc, relevance=0.8, tier=Tier.HIGH)  # fmt: skip


async def test_each_claim_of_a_mixed_language_post_keeps_its_language(
    identifier: LanguageIdentifier,
) -> None:
    post = post_from_text(
        "The WHO confirmed that 5G towers spread the virus in 2020. "
        "Die Regierung hat bestätigt, dass die Mehrwertsteuer im Januar auf 25 Prozent steigt.\n"
        "الحكومة أعلنت أن اللقاحات تسبب التوحد عند الأطفال.\n"
        "世界卫生组织证实，喝热水可以杀死新冠病毒。",
        max_chars=10_000,
    )
    post = await identify_post(post, identifier)
    assert post.language is not None
    claims = await identify_claims(await extract_claims(post), post, identifier)
    assert [c.language for c in claims] == ["en", "de", "ar", "zh-Hans"]


async def test_the_stance_model_never_decides_a_claim_it_cannot_read(
    verifier: VerifierJudge,
) -> None:
    english = Claim(id="c1", post_id="p", position=0, text="The Eiffel Tower is in Berlin.",
                    language="en")  # fmt: skip
    spanish = Claim(id="c2", post_id="p", position=1, text="La Torre Eiffel está en Berlín.",
                    language="es")  # fmt: skip
    chinese = Claim(id="c3", post_id="p", position=2, text="埃菲尔铁塔位于柏林。")  # not identified
    evidence = [_evidence(1, PAGE, "c1"), _evidence(2, PAGE, "c2"), _evidence(3, PAGE, "c3")]
    decided = await decide_readable(verifier, [english, spanish, chinese], evidence)
    by_claim = {cv.claim_id: cv for cv in decided.verdict.claims}
    assert by_claim["c1"].label is Label.FALSE  # English: the stance model decides as before
    for cid, named in (("c2", "'es'"), ("c3", "'zh-Hans'")):
        assert by_claim[cid].label is Label.UNVERIFIABLE
        assert by_claim[cid].basis is Basis.LANGUAGE
        assert named in by_claim[cid].rationale and "English only" in by_claim[cid].rationale
    # their nearest sources stay listed (the reply names them as such, never as proof)
    assert by_claim["c2"].evidence_ids == ("e2",) and by_claim["c3"].evidence_ids == ("e3",)
    # nothing the stance model could have guessed about them is left for later rules to read
    assert {q.evidence_id for q in decided.quotes} <= {"e1"}
    assert {r.evidence_id for r in decided.readings} == {"e1"}
    stances = {e.id: e.stance for e in decided.evidence}
    assert stances["e1"] is Stance.REFUTES
    assert stances["e2"] is stances["e3"] is Stance.UNKNOWN
    assert [e.id for e in decided.evidence] == ["e1", "e2", "e3"]


async def test_in_the_hybrid_judge_the_model_verdict_on_a_foreign_claim_stands(
    verifier: VerifierJudge,
) -> None:
    spanish = Claim(id="c2", post_id="p", position=0, text="La Torre Eiffel está en Berlín.",
                    language="es")  # fmt: skip
    model = Verdict(
        label=Label.ACCURATE,
        claims=(ClaimVerdict("c2", Label.ACCURATE, "the model read it", basis=Basis.MODEL),),
    )
    decided = await decide_readable(verifier, [spanish], [_evidence(2, PAGE, "c2")])
    verdict, changed = settle(model, decided, Thresholds(confident=0.0))
    assert changed == [] and verdict == model


@pytest.fixture
async def indexed(store: Store, embedder: OnnxEmbedder) -> Store:
    load_seed(store.sources)
    report = await Ingester(store.documents, embedder).ingest([str(FIXTURES / "corpus.jsonl")])
    assert report.added == 7
    return store


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("世界卫生组织证实，喝漂白剂可以预防新冠病毒。", "zh-Hans"),
        ("منظمة الصحة العالمية أكدت أن شرب المبيض يحمي من كوفيد-19.", "ar"),
        ("विश्व स्वास्थ्य संगठन ने पुष्टि की कि ब्लीच पीने से कोविड-19 से बचाव होता है।", "hi"),
        ("Beber lejía protege contra el COVID-19, confirmó la OMS.", "es"),
    ],
)
async def test_chinese_arabic_and_hindi_posts_are_checked_and_stored_with_their_language(
    indexed: Store,
    embedder: OnnxEmbedder,
    identifier: LanguageIdentifier,
    verifier: VerifierJudge,
    text: str,
    language: str,
) -> None:
    deps = CheckDeps(
        index=indexed.documents,
        embedder=embedder,
        rater=SourcePolicy(indexed.sources, unrated="allow"),
        judge=ReviewMatchJudge(embedder, match_threshold=0.75),
        verifier=verifier,
        languages=identifier,
    )
    post = post_from_text(text, max_chars=10_000)
    check = await run_check(post, deps=deps, config=CheckConfig())  # no EmptyPostError
    assert check.post.language == language
    assert check.claims and {c.language for c in check.claims} == {language}
    for cv in check.verdict.claims:
        # the English corpus holds the WHO's bleach page: only a matching fact-check may decide
        assert cv.label is Label.UNVERIFIABLE or cv.basis is Basis.REVIEW
    assert "language" in {t.stage for t in check.timings}
    indexed.checks.save(check)
    loaded = indexed.checks.get(check.id)
    assert loaded == check
    assert [c.language for c in loaded.claims] == [language] * len(check.claims)
