"""A whole check on the model path against a local OpenAI-compatible stand-in."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.prompt_reading import quotes_of
from bots.app.root import App
from bots.evaluation.averitec import trace_of
from bots.settings import FetchSettings, ModelSettings, SearchSettings, Settings
from pipeline.evidence.ingest import Ingester
from pipeline.inputs.posts import post_from_text
from pipeline.records.domain import Basis, Check, Label, Relation
from tests.conftest import FIXTURES
from tests.pipeline.llm.fake_openai import Seen, error, judge_labels, serve_openai
from tests.support.httpserver import serve

WHO_QUOTE = (
    "Spraying or introducing bleach or another disinfectant into your body will not protect "
    "you against COVID-19 and can be dangerous."
)


def _user(seen: Seen) -> str:
    return "\n".join(m["content"] for m in seen.messages if m["role"] == "user")


def router(seen: Seen) -> Any:
    """Answer each stage as a capable model would, reading the data blocks it was sent."""
    user = _user(seen)
    if seen.stage == "claims":
        return {
            "checkable": True,
            "reason": "a health claim",
            "claims": [
                {
                    "text": "Drinking bleach protects you against COVID-19.",
                    "queries": ["bleach protect COVID-19", "drinking disinfectant coronavirus"],
                }
            ],
        }
    if seen.stage == "extraction":
        return {"quotes": quotes_of(user, WHO_QUOTE, "refutes")}
    if seen.stage == "judge":
        real = judge_labels(user)
        labels = [label for name, label in real.items() if name.startswith("C1.")]
        facet = {"status": "consistent", "note": ""}
        narratives = [
            {
                "narrative": label,
                "relation": "conflicts",
                "facets": {
                    "who": facet,
                    "what": {"status": "conflicting", "note": "does not protect"},
                    "when": facet,
                    "where": facet,
                    "why": facet,
                    "how": facet,
                },
                "rationale": "Health authorities say bleach does not protect and is dangerous.",
            }
            for label in labels
        ]
        return {
            "claims": [
                {
                    "claim": real["C1"],
                    "narratives": narratives,
                    "explanation": "Bleach does not protect against COVID-19; it is dangerous.",
                }
            ]
        }
    return error(400)


def _app(tmp_path: Path, base_url: str, embedder: Any) -> App:
    settings = Settings(
        data_dir=tmp_path / "data",
        model=ModelSettings(
            base_url=base_url,
            api_key="test-key",
            model="fake-model",
            input_price_per_mtok=0.15,
            output_price_per_mtok=0.6,
            refine_rounds=0,
        ),
    )
    app = App(settings, embedder=embedder)
    asyncio.run(Ingester(app.store.documents, embedder).ingest([str(FIXTURES / "corpus.jsonl")]))
    return app


def test_model_path_quotes_judges_and_accounts(tmp_path: Path, embedder: Any) -> None:
    with serve_openai(router=router) as fake:
        app = _app(tmp_path, fake.base_url, embedder)
        post = post_from_text("Drink bleach, it protects you against COVID-19!!", max_chars=10_000)
        check = asyncio.run(app.check(post))
        stages = [s.stage for s in fake.completions]
    assert stages == ["claims", "extraction", "judge"]  # 3 calls, all on the critical path
    assert check.verdict.label is Label.FALSE
    assert check.judge == "model:fake-model"
    assert WHO_QUOTE[:60] in check.correction.text
    assert any("who.int" in r.url for r in check.correction.references)
    assert {u.stage for u in check.usage} == {"claims", "extraction", "judge"}
    assert sum(u.calls for u in check.usage) == 3
    assert sum(u.cost_usd for u in check.usage) > 0
    stored = app.store.checks.get(check.id)
    assert stored.usage == check.usage
    # The narratives the judge read and its reading of each reach the check and the store.
    assert check.narratives and check.assessments
    evidence_ids = {e.id for e in check.evidence}
    assert all(set(n.evidence_ids) <= evidence_ids for n in check.narratives)
    assert {a.narrative_id for a in check.assessments} <= {n.id for n in check.narratives}
    assert any(a.relation is Relation.CONFLICTS for a in check.assessments)
    assert stored.narratives == check.narratives and stored.assessments == check.assessments
    assert check.verdict.claims[0].basis is not Basis.UNKNOWN
    assert stored.verdict == check.verdict  # the basis is stored with each claim
    # what an evaluation journals about the check, to read its errors by
    trace = trace_of(check)
    assert trace["claims"][0]["label"] == "false" and trace["claims"][0]["basis"]
    assert {"stance": "refutes", "publisher": "www.who.int"}.items() <= trace["quotes"][0].items()
    assert WHO_QUOTE in trace["quotes"][0]["text"]
    # every quote extraction kept, shown or not, and the store keeps them
    assert check.quotes and stored.quotes == check.quotes
    assert [q["stance"] for q in trace["extracted"]] == [q.stance.value for q in check.quotes]
    assert "refutes" in {q["stance"] for q in trace["extracted"]}
    assert {n["relation"] for n in trace["narratives"]} >= {"conflicts"}
    app.close()


def test_a_failing_model_falls_back_without_failing_the_check(
    tmp_path: Path, embedder: Any
) -> None:
    with serve_openai(router=lambda seen: error(500)) as fake:
        app = _app(tmp_path, fake.base_url, embedder)
        post = post_from_text("Drinking bleach protects you against COVID-19.", max_chars=10_000)
        check = asyncio.run(app.check(post))
    assert check.verdict.label is Label.FALSE  # the no-model judge's fact-check match
    assert check.correction.text.startswith("This post is false.")
    assert sum(u.failures for u in check.usage) >= 1
    assert check.assessments == ()  # the model never read the narratives
    stored = app.store.checks.get(check.id).verdict.claims
    assert [v.basis for v in stored] == [v.basis for v in check.verdict.claims]
    assert Basis.FALLBACK in {v.basis for v in check.verdict.claims}
    app.close()


@pytest.mark.parametrize(
    "made_up",
    [
        {"quotes": [{"sentences": [999], "stance": "refutes"}]},  # a number never shown
        {
            "quotes": [
                {"doc": 1, "stance": "refutes", "quote": "Bleach cures nothing, say experts."}
            ]
        },
        {"quotes": [{"doc": 1, "stance": "refutes", "quote": "https://evil.example"}]},
    ],
)
def test_quotes_not_in_the_page_never_reach_the_reply(
    tmp_path: Path, embedder: Any, made_up: dict[str, Any]
) -> None:
    def lying(seen: Seen) -> Any:
        if seen.stage == "extraction":
            return made_up
        return router(seen)

    with serve_openai(router=lying) as fake:
        app = _app(tmp_path, fake.base_url, embedder)
        post = post_from_text("Drinking bleach protects you against COVID-19.", max_chars=10_000)
        check = asyncio.run(app.check(post))
    assert "Bleach cures nothing" not in check.correction.text
    assert "evil.example" not in check.correction.text
    assert all(item.quote is None for item in check.correction.items)
    app.close()


@pytest.fixture
def http_clients(monkeypatch: pytest.MonkeyPatch) -> list[httpx.AsyncClient]:
    """Every httpx.AsyncClient made while the test runs (the model SDK's clients are ones too)."""
    made: list[httpx.AsyncClient] = []
    original = httpx.AsyncClient.__init__

    def counting(self: httpx.AsyncClient, *args: Any, **kwargs: Any) -> None:
        made.append(self)
        original(self, *args, **kwargs)

    monkeypatch.setattr(httpx.AsyncClient, "__init__", counting)
    return made


def test_checks_share_the_process_clients(
    tmp_path: Path, embedder: Any, http_clients: list[httpx.AsyncClient]
) -> None:
    """A check builds no HTTP or model client: the search, model and fetch clients are shared."""
    texts = [
        "Drink bleach, it protects you against COVID-19!!",
        "Drinking bleach protects people against COVID-19.",
        "Bleach protects you from COVID-19 if you drink it.",
    ]
    with serve_openai(router=router) as fake, serve() as site:
        site.add("/search", json.dumps({"query": "q", "results": []}), "application/json")
        settings = Settings(
            data_dir=tmp_path / "data",
            model=ModelSettings(
                base_url=fake.base_url, api_key="test-key", model="fake-model", refine_rounds=0
            ),
            search=SearchSettings(
                providers=["searxng"], searxng_url=site.base, fact_check_sites=[]
            ),
            fetch=FetchSettings(allowed_networks=("127.0.0.1/32",)),
        )
        app = App(settings, embedder=embedder)

        async def checks() -> tuple[int, int, list[Check]]:
            made: list[Check] = [await app.check(post_from_text(texts[0], max_chars=10_000))]
            after_first = (len(http_clients), app.resources.clients.constructed)
            for text in texts[1:]:
                made.append(await app.check(post_from_text(text, max_chars=10_000)))
            await app.close_fetcher()
            return *after_first, made

        clients, constructed, made = asyncio.run(checks())
        searched = sum(path.startswith("/search") for path in site.seen)
    assert [c.judge for c in made] == ["model:fake-model"] * 3  # the model path, each time
    assert searched >= 3  # and live search, each time
    assert clients >= 2  # the first check made the search client and the model SDK's
    assert len(http_clients) == clients  # the next two made none
    assert app.resources.clients.constructed == constructed
    app.close()


BLEACH = "Drink bleach, it protects you against COVID-19!!"


def _bleach_check(
    tmp_path: Path, embedder: Any, answer: Any, **verifier: str
) -> tuple[Check, list[Seen]]:
    """Check the bleach post with the verifier settings given, against `answer` as the model."""
    with serve_openai(router=answer) as fake:
        app = _app(tmp_path, fake.base_url, embedder)
        for name, value in verifier.items():
            setattr(app.settings.verifier, name, value)
        check = asyncio.run(app.check(post_from_text(BLEACH, max_chars=10_000)))
        app.close()
        return check, list(fake.completions)


def test_the_hybrid_judge_quotes_with_the_verifier_and_shows_its_reading(
    tmp_path: Path, embedder: Any
) -> None:
    check, seen = _bleach_check(tmp_path, embedder, router, judge="hybrid")
    judged = _user(seen[-1])
    assert [s.stage for s in seen] == ["claims", "judge"]  # the stance model quotes
    assert check.judge == "hybrid:model:fake-model"
    assert check.verdict.label is Label.FALSE
    assert check.quotes and all(q.strength is not None for q in check.quotes)
    pages = {e.id: e.passage.text for e in check.evidence}
    assert all(q.text in pages[q.evidence_id] for q in check.quotes)  # verbatim
    shown = {q.text: f'verifier="{q.stance.value} {q.strength:.2f}"' for q in check.quotes}
    assert any(attribute in judged for attribute in shown.values())


def test_the_verifier_can_take_its_claims_from_the_model(tmp_path: Path, embedder: Any) -> None:
    check, seen = _bleach_check(tmp_path, embedder, router, judge="verifier", claims="model")
    assert [s.stage for s in seen] == [
        "claims"
    ]  # one call splits the post; the stance model decides
    assert check.judge == "verifier"
    assert [c.text for c in check.claims] == ["Drinking bleach protects you against COVID-19."]
    assert [(u.stage, u.calls, u.fallbacks) for u in check.usage] == [("claims", 1, 0)]
    assert all(cv.basis is not Basis.MODEL for cv in check.verdict.claims)


def test_a_failing_claims_model_leaves_the_verifier_its_heuristic_claims(
    tmp_path: Path, embedder: Any
) -> None:
    failing = lambda seen: error(500)  # noqa: E731
    check, _ = _bleach_check(tmp_path, embedder, failing, judge="verifier", claims="model")
    assert check.judge == "verifier"
    assert check.claims  # the heuristic stage's
    assert [(u.stage, u.fallbacks) for u in check.usage] == [("claims", 1)]


def test_the_model_claims_setting_leaves_the_heuristic_stage_without_a_verifier_judge(
    tmp_path: Path, embedder: Any
) -> None:
    with serve_openai(router=router) as fake:
        app = _app(tmp_path, fake.base_url, embedder)
        app.settings.verifier.judge = "model"
        app.settings.verifier.claims = "model"
        assert asyncio.run(app.checks.claims_llm()) is None  # the model path has its own
        app.settings.verifier.judge = "verifier"
        assert asyncio.run(app.checks.claims_llm()) is not None
        app.settings.verifier.claims = "heuristic"
        assert asyncio.run(app.checks.claims_llm()) is None
        assert not fake.completions
    app.close()
