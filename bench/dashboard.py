"""`factbot bench dashboard`: the checks list and a check page with many stored checks.

A fresh database gets `--checks` complete checks (post, claim, evidence, references; stored
through the real CheckRepo, so the FTS triggers run) spread over 90 days, with varied words.
A signed-in reviewer then asks, in process through the real ASGI app (no network), for the
checks list (first page, a verdict filter, a full-text search, a deep page) and for random
check pages. Printed per page: p50/p95 server time in ms (goal ≤ 100) and the page weight
(the HTML, and the HTML plus the static files it loads).
"""

from __future__ import annotations

import json
import random
import re
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import click

from pipeline.records.domain import Label
from tests.bots.dashboard.factory import make_check

WORDS = (
    "vaccine moon election climate water tower virus border tax river bridge school army "
    "coffee bank storm flood wheat price doctor mayor train bridge fire"
).split()
LABELS = [Label.FALSE, Label.MISLEADING, Label.ACCURATE, Label.PARTLY_ACCURATE, Label.UNVERIFIABLE]
ASSETS = ("/static/app.css", "/static/app.js", "/static/htmx.min.js")


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def fill(store: Any, count: int, seed: int) -> list[str]:
    """Store count checks with varied words, verdicts, platforms and days; return their ids.

    One check is saved through CheckRepo; the rest copy its rows with new ids, texts, labels
    and times, in batches of plain INSERTs (the FTS triggers still run for every row).
    """
    rng = random.Random(seed)
    now = datetime.now(UTC)
    template = make_check()
    store.checks.save(template)
    rows = {
        table: dict(next(store.db.query(f"SELECT * FROM {table} WHERE {key} = ?", [value])))
        for table, key, value in (
            ("posts", "id", template.post.id),
            ("checks", "id", template.id),
            ("claims", "check_id", template.id),
            ("evidence", "check_id", template.id),
        )
    }
    ids = [template.id]
    batch = 5000
    for start in range(1, count, batch):
        out: dict[str, list[dict[str, Any]]] = {t: [] for t in rows}
        for n in range(start, min(start + batch, count)):
            words = " ".join(rng.choice(WORDS) for _ in range(12))
            post_id, check_id, claim_id = f"p{n}", f"c{n:07d}", f"cl{n}"
            ids.append(check_id)
            out["posts"].append(
                {**rows["posts"], "id": post_id, "platform_id": post_id, "text": f"Post: {words}.",
                 "platform": rng.choice(("api", "slack", "discord", "web"))}
            )  # fmt: skip
            out["checks"].append(
                {**rows["checks"], "id": check_id, "post_id": post_id,
                 "verdict": rng.choice(LABELS).value, "judge": rng.choice(("no-model", "model")),
                 "created_at": (now - timedelta(seconds=rng.uniform(0, 90 * 86400))).isoformat()}
            )  # fmt: skip
            out["claims"].append(
                {**rows["claims"], "id": claim_id, "check_id": check_id, "post_id": post_id,
                 "text": words[:80]}
            )  # fmt: skip
            out["evidence"].append(
                {**rows["evidence"], "id": f"e{n}", "check_id": check_id, "claim_id": claim_id}
            )
        with store.db.conn:
            for table, items in out.items():
                columns = list(rows[table])
                marks = ",".join("?" * len(columns))
                store.db.conn.executemany(
                    f"INSERT INTO {table} ({','.join(columns)}) VALUES ({marks})",
                    [[item[c] for c in columns] for item in items],
                )
    return ids


@click.command("dashboard")
@click.option("--checks", "count", default=100_000, show_default=True, help="Checks stored.")
@click.option("--requests", "requests", default=50, show_default=True, help="Requests a page.")
@click.option("--seed", default=7, show_default=True)
@click.option("--report", "report_path", type=click.Path(path_type=Path), help="Write JSON here.")
def dashboard_bench(count: int, requests: int, seed: int, report_path: Path | None) -> None:
    """Time the dashboard's checks list and check page over many stored checks."""
    from fastapi.testclient import TestClient

    from bots.app.root import App
    from bots.settings import Settings
    from bots.web import create_web

    with tempfile.TemporaryDirectory() as folder:
        app = App(Settings(data_dir=Path(folder)))
        started = time.perf_counter()
        ids = fill(app.store, count, seed)
        fill_seconds = time.perf_counter() - started
        app.store.users.add("bench", "reviewer", "bench password 123")
        client = TestClient(create_web(app, workers=0))  # no lifespan: no model is loaded
        page = client.get("/signin")
        token = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text)
        assert token is not None
        signed = client.post(
            "/signin",
            data={"name": "bench", "password": "bench password 123", "csrf": token.group(1)},
            follow_redirects=False,
        )
        assert signed.status_code == 303, signed.text
        assets = sum(len(client.get(a).content) for a in ASSETS)
        rng = random.Random(seed)
        pages: dict[str, Callable[[], str]] = {
            "list": lambda: "/",
            "list_verdict": lambda: "/?verdict=false",
            "list_search": lambda: f"/?q={rng.choice(WORDS)}+{rng.choice(WORDS)}",
            "list_deep_page": lambda: f"/?page={rng.randint(500, 1500)}",
            "check": lambda: f"/check/{rng.choice(ids)}",
        }
        figures: dict[str, Any] = {
            "checks": count,
            "fill_seconds": round(fill_seconds, 1),
            "requests_per_page": requests,
            "static_bytes": assets,
        }
        for name, path in pages.items():
            client.get(path())  # warm the page cache and the template
            times, sizes = [], []
            for _ in range(requests):
                t0 = time.perf_counter()
                response = client.get(path())
                times.append((time.perf_counter() - t0) * 1000)
                assert response.status_code == 200, (name, response.status_code)
                sizes.append(len(response.content))
            figures[name] = {
                "p50_ms": round(_quantile(times, 0.5), 1),
                "p95_ms": round(_quantile(times, 0.95), 1),
                "html_bytes": round(sum(sizes) / len(sizes)),
                "with_static_bytes": round(sum(sizes) / len(sizes)) + assets,
            }
        app.close()
    click.echo(json.dumps(figures, indent=2))
    if report_path:
        report_path.write_text(json.dumps(figures, indent=2), encoding="utf-8")
