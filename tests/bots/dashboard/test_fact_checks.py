"""The Fact-checks page (counts, the matcher's ranking, a plain listing) and a check's matched
fact-checks, over a real App, its real matcher (the shipped MiniLM) and real HTTP."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from bots.app.root import App
from bots.settings import FactCheckSettings, LanguageIdSettings, Settings
from bots.web import create_web
from pipeline.records.domain import Label
from pipeline.records.factchecks import ClaimMatch, FactCheck, FactCheckMatch
from tests.bots.dashboard.conftest import PASSWORD, sign_in
from tests.bots.dashboard.factory import make_check, store_checks
from tests.support.factchecks import store_reviews

BLEACH = FactCheck(
    url="https://www.politifact.com/factchecks/2020/apr/24/bleach/",
    claim_reviewed="Drinking bleach cures COVID-19.",
    publisher="PolitiFact",
    headline="No, drinking bleach does not cure COVID-19",
    review_date=datetime(2020, 4, 24, tzinfo=UTC),
    language="en",
    rating="Pants on Fire",
    label=Label.FALSE,
)
HOSTILE = FactCheck(
    url="javascript:alert(1)",
    claim_reviewed="Wind turbines <script>alert('feed')</script> cause cancer.",
    publisher="Feed <b>Checkers</b>",
    language="es",
    rating="<i>Falso</i>",
)


@pytest.fixture
def app(data_dir: Path, embedder: Any) -> Iterator[App]:
    """An App whose index holds two reviews (one hostile), English matching only."""
    made = App(
        Settings(
            data_dir=data_dir,
            factchecks=FactCheckSettings(multilingual=False),
            language_id=LanguageIdSettings(enabled=False),
        ),
        embedder=embedder,
    )
    made.store.users.add("vera", "viewer", PASSWORD)
    store_reviews(made.store.fact_checks, [BLEACH, HOSTILE], [embedder])
    yield made
    made.close()


@pytest.fixture
def client(app: App) -> Iterator[TestClient]:
    with TestClient(create_web(app, workers=0)) as test_client:
        yield test_client


def test_the_page_needs_a_signed_in_viewer_and_counts_the_index(client: TestClient) -> None:
    response = client.get("/factchecks", follow_redirects=False)
    assert response.headers["location"] == "/signin?next=/factchecks"
    sign_in(client, "vera")
    html = client.get("/factchecks").text
    assert '<a href="/factchecks" aria-current="page">Fact-checks</a>' in html
    assert '<span id="fc-total">2</span>' in html
    assert "<td>PolitiFact</td><td>1</td>" in html and "<td>es</td><td>1</td>" in html


def test_a_post_is_matched_with_its_scores_and_the_decision(client: TestClient) -> None:
    sign_in(client, "vera")
    html = client.get("/factchecks", params={"q": "Drinking bleach cures COVID-19!"}).text
    assert "What the matcher ranks" in html
    first, rest = html.split('<li class="card">')[1:3]
    assert "accepted" in first and "score " in first and "cosine " in first
    assert f'<a href="{BLEACH.url}" rel="noopener nofollow noreferrer">' in first
    assert "refused" in rest and "not the best candidate" in rest


def test_a_short_text_lists_the_reviews_holding_its_words(client: TestClient) -> None:
    sign_in(client, "vera")
    html = client.get("/factchecks", params={"q": "bleach"}).text
    assert "Reviews holding these words" in html and "score " not in html
    assert BLEACH.headline in html and "Wind turbines" not in html
    assert "No fact-check in the index holds" in client.get("/factchecks?q=zebra").text


def test_feed_text_is_escaped_and_only_http_links_are_linked(client: TestClient) -> None:
    sign_in(client, "vera")
    html = client.get("/factchecks", params={"q": "turbines"}).text
    assert "&lt;script&gt;alert(&#39;feed&#39;)&lt;/script&gt;" in html
    assert "<script>alert('feed')" not in html and "<b>Checkers</b>" not in html
    assert 'href="javascript:' not in html and "javascript:alert(1)" in html  # shown as text


def test_the_check_page_shows_each_claims_fact_check(app: App, client: TestClient) -> None:
    check = make_check()
    [claim] = check.claims
    match = FactCheckMatch(BLEACH, score=0.97, lexical=0.8, semantic=0.93, accepted=True)
    check = dataclasses.replace(check, fact_checks=(ClaimMatch(claim.id, match),))
    refused = make_check()
    miss = FactCheckMatch(HOSTILE, score=0.5, reasons=("score 0.50 below 0.89",))
    refused = dataclasses.replace(refused, fact_checks=(ClaimMatch(refused.claims[0].id, miss),))
    store_checks(app.store, [check, refused])
    sign_in(client, "vera")
    html = client.get(f"/check/{check.id}").text
    assert "Published fact-check" in html and "accepted" in html and "score 0.970" in html
    assert (
        "<strong>PolitiFact</strong> · rated <q>Pants on Fire</q>" in html and "2020-04-24" in html
    )
    assert f'<a href="{BLEACH.url}" rel="noopener nofollow noreferrer">' in html
    other = client.get(f"/check/{refused.id}").text
    assert "refused</span>: score 0.50 below 0.89" in other
    assert "&lt;i&gt;Falso&lt;/i&gt;" in other and 'href="javascript:' not in other
