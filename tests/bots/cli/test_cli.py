"""The `factbot` command line, end to end on a temporary data folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from bots.cli.main import main
from tests.conftest import FIXTURES


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("FACTBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)  # no stray .env from the working tree

    def invoke(*args: str, input: bytes | str | None = None) -> Result:
        return CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)

    return invoke


@pytest.fixture
def ingested(run):  # type: ignore[no-untyped-def]
    result = run("ingest", "--no-progress", str(FIXTURES / "corpus.jsonl"))
    assert result.exit_code == 0, result.output
    assert "7 added" in result.output
    return run


def test_help_has_examples(run) -> None:  # type: ignore[no-untyped-def]
    for command in ([], ["check"], ["ingest"], ["sources"], ["eval"], ["show"], ["serve"]):
        result = run(*command, "--help")
        assert result.exit_code == 0
        assert "Example" in result.output


def test_check_stores_and_show_reprints(ingested) -> None:  # type: ignore[no-untyped-def]
    result = ingested("check", "--json", "Drinking bleach protects you against COVID-19.")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["verdict"] == "false"
    assert data["correction"]["text"].startswith("This post is false.")
    evidence_urls = {e["url"] for e in data["evidence"]}
    assert data["correction"]["references"]
    assert all(r["url"] in evidence_urls for r in data["correction"]["references"])
    shown = ingested("show", data["id"])
    assert shown.exit_code == 0
    assert "This post is false." in shown.output and "References:" in shown.output
    assert data["correction"]["references"][0]["url"] in shown.output


def test_reingest_changes_nothing(ingested) -> None:  # type: ignore[no-untyped-def]
    again = ingested("ingest", "--no-progress", str(FIXTURES / "corpus.jsonl"))
    assert "0 added, 0 updated, 7 unchanged" in again.output


def test_before_bound_is_applied(ingested) -> None:  # type: ignore[no-untyped-def]
    result = ingested(
        "check", "--json", "--before", "2020-04-01", "5G networks spread the coronavirus."
    )
    data = json.loads(result.stdout)
    assert data["before"].startswith("2020-04-01")
    assert data["verdict"] == "unverifiable"


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["check", ""], None, "empty"),
        (["check", "😂😂🔥"], None, "no text to check"),
        (["check", "-"], "x" * 1_048_576, "limit is 100,000"),
        (["check", "-"], b"caf\xe9 is great", "not valid UTF-8"),
        (["check", "file:///etc/passwd"], None, "only http(s)"),
        (["check", "http://127.0.0.1:1/x"], None, "refused"),
        (["show", "does-not-exist"], None, "no check"),
        (["check", "--before", "yesterday", "x y z w"], None, "ISO date"),
    ],
)
def test_bad_input_gives_a_clear_error(run, args, stdin, message) -> None:  # type: ignore[no-untyped-def]
    result = run(*args, input=stdin)
    assert result.exit_code != 0
    if message:
        assert message in result.output


def test_invalid_setting_says_how_to_fix(run, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("FACTBOT_RETRIEVAL__RELEVANCE_THRESHOLD", "high")
    result = run("show", "x")
    assert result.exit_code != 0
    assert "FACTBOT_RETRIEVAL__RELEVANCE_THRESHOLD" in result.output


def test_sources_lookup_explains(run) -> None:  # type: ignore[no-untyped-def]
    result = run("sources", "lookup", "https://www.politifact.com/factchecks/x")
    assert result.exit_code == 0
    assert "high" in result.output and "seed" in result.output


def test_console_script_runs(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("factbot")
    result = subprocess.run(
        [str(script), "--help"], capture_output=True, text=True, check=False, timeout=120
    )
    assert result.returncode == 0 and "factbot" in result.stdout


def test_check_url_fetches_the_page(ingested, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    from tests.support.httpserver import serve

    page = (
        "<html><head><title>Viral claim</title></head><body><article><p>"
        + "Drinking bleach protects you against COVID-19, says a viral post shared widely. " * 3
        + "</p></article></body></html>"
    )
    with serve() as site:
        url = site.add("/post.html", page)
        refused = ingested("check", url)  # loopback is refused by default
        assert refused.exit_code == 2 and "refused" in refused.output
        monkeypatch.setenv("FACTBOT_FETCH__ALLOWED_NETWORKS", '["127.0.0.1/32"]')
        result = ingested("check", "--json", url)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["post"]["url"] == url
    assert data["verdict"] == "false"


def test_check_reads_a_lead_page_and_cites_it(run, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    from tests.support.httpserver import serve

    fact_check = (FIXTURES / "pages" / "factcheck_pants_on_fire.html").read_text("utf-8")
    monkeypatch.setenv("FACTBOT_FETCH__ALLOWED_NETWORKS", '["127.0.0.1/32"]')
    post = "Drinking diluted bleach cures the flu, my aunt swears by it."
    with serve() as site:
        lead = site.add("/bleach-flu", fact_check)
        plain = json.loads(run("check", "--json", post).stdout)  # nothing indexed: no evidence
        result = run("check", "--json", "--lead", lead, post)
        bad = run("check", "--lead", "ftp://files.example/x", post)
    assert plain["verdict"] == "unverifiable" and plain["correction"]["references"] == []
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["verdict"] == "false" and data["post"]["leads"] == [lead]
    assert [r["url"] for r in data["correction"]["references"]] == [lead]
    assert data["search"]["leads"] == [{"url": lead, "read": True, "reason": ""}]
    assert bad.exit_code == 2 and "scheme 'ftp' is not http or https" in bad.output


def test_sources_import_list_and_block(run, shared_data: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    mbfc = run("sources", "import", str(shared_data / "credibility" / "mbfc_idiap.csv"))
    assert mbfc.exit_code == 0 and "sources written" in mbfc.output
    listed = run("sources", "list", "--tier", "high", "--limit", "5")
    assert listed.exit_code == 0 and "high" in listed.output
    plain = tmp_path / "domains.txt"
    plain.write_text("example-misinfo.com\nnot a domain\n")
    needs_tier = run("sources", "import", str(plain))
    assert needs_tier.exit_code != 0 and "--tier" in needs_tier.output
    blocked = run("sources", "import", str(plain), "--format", "blocklist")
    assert blocked.exit_code == 0 and "line 2" in blocked.output
    lookup = run("sources", "lookup", "https://www.example-misinfo.com/story")
    assert "blocked (never cited)" in lookup.output


def test_forget_deletes_a_users_platform_requests(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import asyncio

    from bots.runtime.platform.contract import Actor, CheckRequest, Destination
    from bots.runtime.platform.intake import PlatformService
    from bots.settings import Settings
    from pipeline.records.domain import Post
    from storage import Store

    settings = Settings(data_dir=tmp_path / "data")
    with Store.open(settings.database_path) as store:
        service = PlatformService(store, settings)
        for n, user in enumerate(["U1", "U1", "U2"]):
            request = CheckRequest(
                post=Post(f"p{n}", "slack", f"T:C:{n}", "The moon is made of cheese."),
                requester=Actor("slack", user),
                destination=Destination("slack", "T", "C", message_id=str(n)),
                event_key=f"Ev{n}",
            )
            assert asyncio.run(service.intake(request)).status == "accepted"
    result = run("forget", "--platform", "slack", "--user", "U1")
    assert result.exit_code == 0, result.output
    assert "deleted 2 requests, 2 posts and 0 checks" in result.output
    with Store.open(settings.database_path) as store:
        assert store.db.execute("SELECT count(*) FROM platform_requests").fetchone()[0] == 1
        assert store.db.execute("SELECT count(*) FROM posts").fetchone()[0] == 1
        assert store.db.execute("SELECT count(*) FROM jobs").fetchone()[0] == 2  # U2's two
    assert run("forget", "--user", "U1").exit_code == 2  # no platform: a usage error
