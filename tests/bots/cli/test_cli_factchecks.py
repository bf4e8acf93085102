"""`factbot factchecks import`: a feed file and a feed over HTTP, the real embedders, SQLite."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from bots.cli.main import main
from storage import Store
from tests.conftest import FIXTURES
from tests.support.httpserver import Response, serve

FEED = FIXTURES / "factchecks" / "datafeed.json"


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("FACTBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)  # no stray .env from the working tree

    def invoke(*args: str) -> Result:
        return CliRunner().invoke(main, list(args), catch_exceptions=False)

    return invoke


def test_import_a_file_then_again(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    first = run("factchecks", "import", str(FEED), "--no-progress")
    assert first.exit_code == 0, first.output
    assert "3 added, 0 updated, 0 unchanged, 0 skipped in " in first.output

    again = run("factchecks", "import", str(FEED), "--no-progress", "--batch-size", "1")
    assert "0 added, 0 updated, 3 unchanged, 0 skipped" in again.output

    with Store.open(tmp_path / "data" / "factbot.db") as store:
        assert store.fact_checks.fact_check_stats().total == 3
        models = store.db.execute(
            "SELECT DISTINCT model FROM fact_check_vectors ORDER BY model"
        ).fetchall()
        assert len(models) == 2  # one vector per review for each of the matcher's models


def test_import_deferring_e5_then_the_embed_pass(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    def vectors() -> dict[str, int]:
        with Store.open(tmp_path / "data" / "factbot.db") as store:
            rows = store.db.execute(
                "SELECT model, COUNT(*) FROM fact_check_vectors GROUP BY model"
            ).fetchall()
        return {str(model): int(n) for model, n in rows}

    first = run("factchecks", "import", str(FEED), "--no-progress", "--defer", "e5")
    assert first.exit_code == 0, first.output
    assert "3 added" in first.output
    assert "multilingual-e5-small-q4: 3 reviews without a vector" in first.output
    assert vectors() == {"all-MiniLM-L6-v2-onnx-int8": 3}
    found = run("factchecks", "search", "the new bridge cost 10 billion dollars!!", "--json")
    assert json.loads(found.output)[0]["accepted"] is True  # BM25 + MiniLM before the pass

    filled = run("factchecks", "embed", "--no-progress", "--batch-size", "2")
    assert filled.exit_code == 0, filled.output
    assert "multilingual-e5-small-q4: 3 of 3 missing embedded in " in filled.output
    assert "all-MiniLM-L6-v2-onnx-int8: 0 of 0 missing embedded" in filled.output
    assert vectors() == {"all-MiniLM-L6-v2-onnx-int8": 3, "multilingual-e5-small-q4": 3}
    again = run("factchecks", "embed", "--model", "e5", "--no-progress")
    assert "multilingual-e5-small-q4: 0 of 0 missing embedded" in again.output
    assert "MiniLM" not in again.output
    unchanged = run("factchecks", "import", str(FEED), "--no-progress")
    assert "0 added, 0 updated, 3 unchanged" in unchanged.output
    assert "missing embedded" not in unchanged.output  # nothing to fill in

    bad = CliRunner().invoke(main, ["factchecks", "embed", "--model", "bert"])
    assert bad.exit_code == 2 and "bert: not one of the matcher's models" in bad.output


def test_import_over_http_gzip_and_a_truncated_feed(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    body = FEED.read_bytes()
    with serve() as server:
        server.route("/feed.json.gz", Response(200, gzip.compress(body), "application/gzip"))
        server.route("/cut.json", Response(200, body[: body.index(b"maldita")], "application/json"))
        server.route("/gone.json", Response(404, b"", "text/plain"))
        whole = run("factchecks", "import", server.url("/feed.json.gz"), "--no-progress")
        cut = CliRunner().invoke(main, ["factchecks", "import", server.url("/cut.json")])
        gone = CliRunner().invoke(main, ["factchecks", "import", server.url("/gone.json")])

    assert "3 added" in whole.output, whole.output
    assert cut.exit_code == 1
    assert "the feed ends early" in cut.output and "the reviews before it are stored" in cut.output
    assert gone.exit_code == 1 and "HTTP 404" in gone.output


def test_a_missing_file_is_a_usage_error(run) -> None:  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(main, ["factchecks", "import", "nowhere.json"])
    assert result.exit_code == 2 and "no such file" in result.output


def test_search_ranks_and_decides(run) -> None:  # type: ignore[no-untyped-def]
    assert run("factchecks", "import", str(FEED), "--no-progress").exit_code == 0
    found = run("factchecks", "search", "the new bridge cost 10 billion dollars!!", "--json")
    assert found.exit_code == 0, found.output
    matches = json.loads(found.output)
    assert matches[0]["url"] == "https://www.politifact.example/factchecks/2024/apr/02/bridge/"
    assert matches[0]["accepted"] is True
    other = run("factchecks", "search", "the bridge cost 3 billion dollars", "--json")
    assert not any(m["accepted"] for m in json.loads(other.output))  # numbers disagree
    text = run("factchecks", "search", "the moon is made of cheese").output
    assert text.startswith("1. ") and "MATCH" in text and "snopes.example" in text
    assert "Glorp-rated (a rating factbot does not read)" in text


def test_eval_claim_matching_reports_its_figures(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    posts = tmp_path / "posts.jsonl"
    gold = "https://www.politifact.example/factchecks/2024/apr/02/bridge/"
    rows = [
        {
            "id": "1",
            "text": "The new bridge cost ten billion dollars, unbelievable",
            "gold": [gold],
        },
        {
            "id": "2",
            "text": "La vacuna lleva un chip para rastrearte",
            "gold": ["https://maldita.example/bulos/vacuna"],
        },
        {"id": "3", "text": "Council meets on Tuesday about parking.", "gold": [gold]},
    ]
    posts.write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = tmp_path / "r.json"
    result = run(
        "eval",
        "claim-matching",
        "--posts",
        str(posts),
        "--feed",
        str(FEED),
        "--no-progress",
        "--report",
        str(report),
    )
    assert result.exit_code == 0, result.output
    figures = json.loads(report.read_text())
    assert figures["posts"] == 3 and figures["errors"] == 0
    assert figures["map_at_1"] >= 2 / 3 and figures["recall_at_5"] >= 2 / 3
    assert figures["match_precision"] == 1.0  # the unrelated post matches nothing
    assert figures["verdict_agreement"] == 1.0  # rated gold reviews, answered with their label
    for key in ("map_at_5", "match_coverage", "latency_p50_ms", "latency_p95_ms"):
        assert key in figures
    assert figures["intervals"]["map_at_5"] is not None

    dropped = tmp_path / "d.json"
    run(
        "eval",
        "claim-matching",
        "--posts",
        str(posts),
        "--feed",
        str(FEED),
        "--drop-gold",
        "--no-progress",
        "--report",
        str(dropped),
    )
    figures = json.loads(dropped.read_text())
    assert figures["false_match_rate"] == 0.0 and figures["map_at_5"] == 0.0
