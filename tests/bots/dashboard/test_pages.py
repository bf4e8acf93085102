"""The dashboard's pages over real storage: filters, search, paging, a check, jobs, sources."""

from __future__ import annotations

import asyncio
import re
import time
from datetime import UTC, datetime, timedelta

from fastapi.testclient import TestClient

from bots.app.root import App
from bots.web import create_web
from pipeline.evidence.ingest import Ingester
from pipeline.records.domain import Label
from storage.browse import PAGE_SIZE
from tests.bots.dashboard.conftest import csrf_of, sign_in
from tests.bots.dashboard.factory import QUOTE, make_check, store_checks
from tests.conftest import FIXTURES
from tests.pipeline.image.images import encode, photo
from tests.pipeline.image.uploads import CLAIM, PDF, SVG, claim_png, truncated_png


def _ids(html: str) -> list[str]:
    return re.findall(r'href="/check/([0-9a-f]+)"', html)


def test_checks_list_filters_by_verdict_platform_judge_and_day(
    app: App, client: TestClient
) -> None:
    day = datetime(2026, 3, 10, 12, tzinfo=UTC)
    a, b, c = store_checks(
        app.store,
        [
            make_check(label=Label.FALSE, platform="api", created_at=day),
            make_check(label=Label.ACCURATE, platform="slack", judge="model", created_at=day),
            make_check(label=Label.FALSE, platform="slack", created_at=day + timedelta(days=2)),
        ],
    )
    sign_in(client, "vera")
    assert set(_ids(client.get("/").text)) == {a.id, b.id, c.id}
    assert set(_ids(client.get("/?verdict=false").text)) == {a.id, c.id}
    assert set(_ids(client.get("/?platform=slack").text)) == {b.id, c.id}
    assert _ids(client.get("/?judge=model").text) == [b.id]
    assert set(_ids(client.get("/?since=2026-03-10&until=2026-03-10").text)) == {a.id, b.id}
    assert _ids(client.get("/?since=2026-03-11").text) == [c.id]
    assert set(_ids(client.get("/?since=not-a-date").text)) == {a.id, b.id, c.id}
    page = client.get("/?verdict=false&platform=slack")
    assert _ids(page.text) == [c.id] and '<option value="slack" selected>' in page.text


def test_search_finds_post_text_and_claims_and_survives_fts_syntax(
    app: App, client: TestClient
) -> None:
    moon, vaccine = store_checks(
        app.store,
        [
            make_check(text="The moon landing was staged.", claim="the moon landing was staged"),
            make_check(text="Read this!", claim="vaccines contain microchips"),
        ],
    )
    sign_in(client, "vera")
    assert _ids(client.get("/?q=landing").text) == [moon.id]
    assert _ids(client.get("/?q=microchip").text) == [vaccine.id]  # a claim; prefix match
    assert _ids(client.get("/?q=moon+microchips").text) == []  # every word must match
    for odd in ('"', "moon OR", "NEAR(", "*", "a:b", "'; DROP TABLE checks; --"):
        assert client.get("/", params={"q": odd}).status_code == 200


def test_search_forgets_redacted_text(app: App, client: TestClient) -> None:
    (check,) = store_checks(app.store, [make_check(text="private words here", claim="private")])
    sign_in(client, "vera")
    assert _ids(client.get("/?q=private").text) == [check.id]
    app.store.db.execute("UPDATE posts SET text = '' WHERE id = ?", [check.post.id])
    app.store.db.execute("UPDATE claims SET text = '' WHERE check_id = ?", [check.id])
    assert _ids(client.get("/?q=private").text) == []
    app.store.db.execute("DELETE FROM evidence WHERE check_id = ?", [check.id])
    app.store.db.execute("DELETE FROM claims WHERE check_id = ?", [check.id])
    app.store.db.execute("DELETE FROM checks WHERE id = ?", [check.id])
    count = app.store.db.execute("SELECT count(*) FROM check_text").fetchone()[0]
    assert count == 0


def test_pages_of_the_list(app: App, client: TestClient) -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    made = store_checks(
        app.store,
        [make_check(created_at=start + timedelta(minutes=n)) for n in range(PAGE_SIZE + 3)],
    )
    sign_in(client, "vera")
    first = client.get("/")
    assert len(_ids(first.text)) == PAGE_SIZE and "Page 1 of 2" in first.text
    assert _ids(first.text)[0] == made[-1].id  # newest first
    second = client.get("/?page=2")
    assert _ids(second.text) == [m.id for m in reversed(made[:3])]
    assert "Page 2 of 2" in client.get("/?page=99").text


def test_check_page_shows_evidence_with_the_quote_highlighted(app: App, client: TestClient) -> None:
    (check,) = store_checks(app.store, [make_check(cost=0.0031)])
    sign_in(client, "vera")
    page = client.get(f"/check/{check.id}")
    assert page.status_code == 200
    assert f"<mark>{QUOTE}</mark>" in page.text
    assert "health.example.org" in page.text and ">high<" in page.text
    assert 'href="https://health.example.org/5g"' in page.text
    assert "retrieval" in page.text and "$0.0031" in page.text and "900/120" in page.text
    missing = client.get("/check/nope")
    assert missing.status_code == 404 and "No such check" in missing.text


def test_everything_from_posts_and_pages_is_escaped(app: App, client: TestClient) -> None:
    evil = "<script>alert('post')</script><img src=x onerror=alert(1)>"
    (check,) = store_checks(
        app.store,
        [make_check(text=evil, claim="<b>bold claim</b>", url="javascript:alert('link')")],
    )
    sign_in(client, "vera")
    for path in (f"/check/{check.id}", "/", "/?q=script", f"/checks/{check.id}"):
        html = client.get(path).text
        assert "<script>alert" not in html and "<img src=x" not in html, path
        assert "<b>bold claim</b>" not in html, path
        assert 'href="javascript:' not in html and "href='javascript:" not in html, path
    assert "&lt;script&gt;" in client.get(f"/check/{check.id}").text


def test_try_it_stores_a_job_and_shows_its_progress(app: App, client: TestClient) -> None:
    sign_in(client, "rita")
    token = csrf_of(client.get("/try").text)
    empty = client.post("/try", data={"text": "   ", "csrf": token})
    assert empty.status_code == 422 and "empty" in empty.text
    sent = client.post(
        "/try", data={"text": "The moon is made of cheese.", "csrf": token}, follow_redirects=False
    )
    job_id = sent.headers["location"].rsplit("/", 1)[1]
    job = app.store.jobs.get(job_id)
    assert job is not None and job.kind == "check" and job.status == "queued"
    page = client.get(f"/try/{job_id}")
    assert f'data-events="/api/checks/{job_id}/events"' in page.text
    assert '<noscript><meta http-equiv="refresh" content="2"></noscript>' in page.text


def test_try_it_goes_in_the_one_way_with_its_kind(app: App, client: TestClient) -> None:
    sign_in(client, "rita")
    token = csrf_of(client.get("/try").text)
    forms = {
        "page": {"url": "https://news.example/story"},
        "text": {"text": "Bats are blind.", "url": "https://news.example/bats"},
    }
    for kind, form in forms.items():
        sent = client.post("/try", data={**form, "csrf": token}, follow_redirects=False)
        job = app.store.jobs.get(sent.headers["location"].rsplit("/", 1)[1])
        assert job is not None and job.post_id is not None
        post = app.store.jobs.post(job.post_id)
        assert post is not None and post.kind == kind and post.platform == "web"


def test_try_it_takes_images_and_says_what_it_could_not_take(app: App, client: TestClient) -> None:
    sign_in(client, "rita")
    page = client.get("/try").text
    assert 'name="image" type="file" accept="image/*" multiple' in page
    token = csrf_of(page)
    png = encode(photo((40, 30)), "PNG")
    limit = app.settings.images.max_bytes
    sent = client.post(
        "/try",
        data={"csrf": token},
        files=[
            ("image", ("photo.png", png, "image/png")),
            ("image", ("scan.jpg", PDF, "image/jpeg")),
            ("image", ("huge.jpg", b"\xff\xd8\xff" + b"\0" * limit, "image/jpeg")),
        ],
        follow_redirects=False,
    )
    assert sent.status_code == 303, sent.text
    job = app.store.jobs.get(sent.headers["location"].rsplit("/", 1)[1])
    assert job is not None and job.post_id is not None
    post = app.store.jobs.post(job.post_id)
    assert post is not None and [r[:40] for r in post.image_refs] == [
        "data:image/png;name=photo.png;base64,iVB",
        "data:application/octet-stream;name=scan.",
    ]
    progress = client.get(sent.headers["location"]).text
    assert "The image &#39;huge.jpg&#39; was not read: it is 10,000,003 bytes" in progress
    only_big = client.post(
        "/try",
        data={"csrf": token},
        files=[("image", ("huge.jpg", b"\0" * (limit + 1), "image/jpeg"))],
    )
    assert only_big.status_code == 422 and "larger than the 10,000,000 bytes" in only_big.text


def test_try_it_shows_the_image_report_of_the_finished_check(app: App) -> None:
    asyncio.run(
        Ingester(app.store.documents, app.embedder).ingest([str(FIXTURES / "corpus.jsonl")])
    )
    with TestClient(create_web(app, workers=1)) as client:
        sign_in(client, "rita")
        token = csrf_of(client.get("/try").text)
        sent = client.post(
            "/try",
            data={"csrf": token, "text": "Seen on my feed today"},
            files=[
                ("image", ("shot.png", claim_png(), "image/png")),
                ("image", ("logo.jpg", SVG, "image/jpeg")),
                ("image", ("broken.png", truncated_png(), "image/png")),
            ],
            follow_redirects=False,
        )
        assert sent.status_code == 303, sent.text
        job_id = sent.headers["location"].rsplit("/", 1)[1]
        deadline = time.monotonic() + 240
        while (job := app.store.jobs.get(job_id)) is not None and job.status != "done":
            assert job.status != "dead", job.last_error
            assert time.monotonic() < deadline, "the check did not finish"
            time.sleep(0.2)
        result = client.get(f"/try/{job_id}")  # follows to the check page
        assert result.url.path == f"/check/{job.result_id}"
        html = result.text
    assert "<h3>Images</h3>" in html and "uploaded shot.png" in html
    assert CLAIM in " ".join(html.split())  # the text read in the screenshot
    assert '<img src="data:image/png;name=shot.png;base64,' in html  # a thumbnail
    assert "uploaded logo.jpg" in html and "SVG is a vector format" in html
    assert "uploaded broken.png" in html and "truncated or corrupt" in html


def test_jobs_page_lists_dead_jobs_and_an_admin_retries_once(app: App, client: TestClient) -> None:
    job, _ = app.store.jobs.enqueue("check", {"check_id": "c1"}, max_attempts=1)
    claimed = app.store.jobs.claim("w1", lease=30)
    assert claimed is not None
    app.store.jobs.fail(claimed, "w1", "FetchError: the page is gone", permanent=True)
    sign_in(client, "ada")
    page = client.get("/jobs?status=dead")
    assert "FetchError: the page is gone" in page.text and "Retry" in page.text
    token = csrf_of(page.text)
    row = client.post(f"/jobs/{job.id}/retry", data={"csrf": token}, headers={"HX-Request": "true"})
    assert row.status_code == 200 and "queued again" in row.text
    again = client.post(
        f"/jobs/{job.id}/retry", data={"csrf": token}, headers={"HX-Request": "true"}
    )
    assert "queued again" not in again.text  # only a dead job is retried
    queued = app.store.jobs.get(job.id)
    assert queued is not None and queued.status == "queued" and queued.attempts == 0


def test_sources_search_rule_and_import(app: App, client: TestClient) -> None:
    sign_in(client, "ada")
    page = client.get("/sources?q=reuters")
    assert "reuters.com" in page.text
    rule = client.get("/sources?domain=https://www.reuters.com/world/story")
    assert 'id="rule"' in rule.text and "Matched entry" in rule.text
    token = csrf_of(page.text)
    table = "domain,tier,reason\nexample-news.test,high,a test rating\n"
    imported = client.post(
        "/sources/import",
        data={"csrf": token, "fmt": "ratings"},
        files={"table": ("mine.csv", table.encode(), "text/csv")},
    )
    assert imported.status_code == 200, imported.text
    assert "1 sources written" in imported.text
    rating = app.store.sources.get("example-news.test")
    assert rating is not None and rating.tier.value == "high"
    bad = client.post(
        "/sources/import",
        data={"csrf": token, "fmt": "tiers"},
        files={"table": ("list.txt", b"a.test\n", "text/plain")},
    )
    assert bad.status_code == 422 and "--tier" in bad.text


def test_overview_figures(app: App, client: TestClient) -> None:
    now = datetime.now(UTC)
    store_checks(
        app.store,
        [
            make_check(label=Label.FALSE, created_at=now - timedelta(hours=1), cost=0.01),
            make_check(label=Label.ACCURATE, created_at=now - timedelta(hours=2), cost=0.02),
            make_check(label=Label.FALSE, created_at=now - timedelta(days=40)),
        ],
    )
    sign_in(client, "vera")
    data = client.get("/overview/data.json?days=30").json()
    today = (now - timedelta(hours=1)).strftime("%Y-%m-%d")
    assert sum(sum(v.values()) for v in data["checks_per_day"].values()) == 2
    assert data["verdicts"] == ["accurate", "false"]
    assert round(sum(data["cost_per_day"].values()), 4) == 0.03
    assert {s["stage"] for s in data["latency"]} == {"claims", "retrieval"}
    assert [s["p95"] for s in data["latency"] if s["stage"] == "retrieval"] == [0.4]
    page = client.get("/overview")
    assert page.status_code == 200 and today in page.text and "chart-per-day" in page.text
