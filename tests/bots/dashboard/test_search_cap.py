"""A broad search over many checks: newest first, exactly, with "1,000+" instead of a count."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from bench.dashboard import fill
from bots.app.root import App
from storage.browse import COUNT_CAP
from tests.bots.dashboard.conftest import sign_in


def test_a_broad_search_shows_the_newest_matches_and_a_capped_total(
    app: App, client: TestClient
) -> None:
    fill(app.store, COUNT_CAP * 3, seed=3)  # stored out of time order, like the benchmark
    rows = app.store.db.execute(
        "SELECT c.id, c.created_at, p.text FROM checks AS c JOIN posts AS p ON p.id = c.post_id"
    ).fetchall()
    matching = sorted(
        (r for r in rows if re.search(r"\bmoon\w*", r[2])), key=lambda r: r[1], reverse=True
    )
    assert len(matching) > COUNT_CAP  # the case under test
    sign_in(client, "vera")
    first = client.get("/?q=moon").text
    assert re.search(r'id="total">1,000\+</span> checks', first)
    assert "Page 1 of 20" in first
    assert re.findall(r'href="/check/([0-9a-z]+)"', first) == [r[0] for r in matching[:50]]
    third = client.get("/?q=moon&page=3").text
    assert re.findall(r'href="/check/([0-9a-z]+)"', third) == [r[0] for r in matching[100:150]]
    assert "Page 20 of 20" in client.get("/?q=moon&page=999").text
    narrow = client.get("/?q=moon&verdict=false&judge=model").text  # few enough to count
    counted = re.search(r'id="total">([\d,]+)</span>', narrow)
    assert counted is not None and int(counted.group(1).replace(",", "")) < COUNT_CAP
