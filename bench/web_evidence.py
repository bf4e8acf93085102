"""Verdicts on web-like evidence: plain support, debunking prose, reports only (issue 51).

`python -m bench.web_evidence` checks the claims of `bench/data/web_evidence.jsonl` (written
for this bench; see its README) through the real check path, offline: the App with live web
search on, a SearXNG stand-in on loopback that answers every query about the claim being
checked with its pages, and publisher stand-ins serving them, so each page is fetched,
extracted, chunked, embedded and indexed before retrieval, relevance, ranking and the
verifier read it, as a new user's check would. Each claim's results are

- **support**: one credible page stating the claim plainly (expected `accurate`);
- **debunk**: one credible page contradicting the claim in ordinary prose, with no rating
  markup and no "Verdict: false" formula (expected `false`, never `accurate`);
- **reports**: pages that only report or repeat the claim (never `accurate`);

each among a dozen other pages of the same half: a page sharing a phrase with the claim but
about something else (support items), other claims' plain pages, debunks and reports. The
index keeps every page of the run, as a local index does.

The set has two halves, `calibration` and `reported`: choices (thresholds, the veto rule) are
made on the first, and the second is reported (`--half`). The figures per kind: counts of each
label, the goal's share with its Wilson interval. `--report` writes them as JSON, with each
claim's verdict, basis and the readings of its evidence (supports, refutes, relevance, the
claim's key words found) for fitting.
"""

from __future__ import annotations

import asyncio
import html
import json
import random
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import click

from bench.reuse_calibration import wilson
from bench.standins import CallLog, _Answer, _json, _Standin, serving

DATA = Path(__file__).with_name("data") / "web_evidence.jsonl"
PAGES_PER_CLAIM = 13  # the claim's own page(s), then others to a dozen or more
GOALS = {"support": ("accurate", 0.90), "debunk": ("false", 0.80), "reports": (None, None)}
_ROBOTS = b"User-agent: *\nAllow: /\n"
# Every page of a site ends with its standard note, as real pages carry more than one claim's
# sentence (and the extractor keeps only pages of at least 25 words of main text).
_NOTES = (
    "This entry is part of the Reference Library's series of short explainers, written by our "
    "editors and reviewed by subject specialists. Sources are listed with each entry, and "
    "corrections can be sent to the editors through the contact page.",
    "This story was written by the Daily News staff. Follow us for updates on local and "
    "national news, and send tips to the newsroom through the contact page.",
)


@dataclass(frozen=True)
class Page:
    """One page of the stand-in web: where it is served and what it says."""

    path: str
    title: str
    text: str
    site: int  # 0: the reference site (plain and debunking pages), 1: the news site

    def html(self, name: str) -> str:
        """Return the page as its site publishes it."""
        text = [*self.text.split("\n"), _NOTES[self.site]]
        paragraphs = "".join(f"<p>{html.escape(p)}</p>" for p in text)
        title = html.escape(self.title)
        return (
            f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
            f'<meta property="og:site_name" content="{name}"></head><body>'
            f"<article><h1>{title}</h1>{paragraphs}</article>"
            f"<footer>{name}</footer></body></html>"
        )


def read_items(path: Path = DATA) -> list[dict[str, Any]]:
    """Return the set's items (claim, kind, half, its own pages)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _own_pages(item: dict[str, Any]) -> list[Page]:
    pages = []
    for n, page in enumerate(item["pages"]):
        site = 1 if item["kind"] == "reports" else 0
        title = page["title"] or page["text"].split(".")[0][:70]
        pages.append(Page(f"/{item['id']}/{n}.html", title, page["text"], site))
    if item.get("near"):
        near = item["near"]
        pages.append(Page(f"/{item['id']}/near.html", near.split(",")[0][:70], near, 1))
    return pages


def result_pages(item: dict[str, Any], items: Sequence[dict[str, Any]]) -> list[Page]:
    """Return the pages a search about the item's claim finds: its own, then a dozen others.

    The others are drawn from the items of the same half (never the other half's pages):
    other claims' plain pages, debunks and reports, in a fixed order per item. The claim's own
    page is not first: the results are shuffled with the item's seed.
    """
    rng = random.Random(item["id"])
    own = _own_pages(item)
    others = [p for other in items if other["id"] != item["id"] for p in _own_pages(other)]
    rng.shuffle(others)
    chosen = own + others[: max(0, PAGES_PER_CLAIM - len(own))]
    rng.shuffle(chosen)
    return chosen


class SiteStandin(_Standin):
    """A publisher serving the set's pages and a robots.txt."""

    def __init__(self, host: str, log: CallLog, *, name: str, pages: dict[str, Page]) -> None:
        super().__init__(host, log)
        self.name = name
        self.pages = pages

    def answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> _Answer:
        """Return robots.txt or a page (404 for anything else)."""
        if path == "/robots.txt":
            return _Answer(200, "text/plain", _ROBOTS, 0.0, "robots")
        page = self.pages.get(urlsplit(path).path)
        if page is None:
            return _Answer(404, "text/plain", b"not found", 0.0, "page")
        return _Answer(200, "text/html; charset=utf-8", page.html(self.name).encode(), 0.0, "page")


class ResultsStandin(_Standin):
    """A SearXNG instance answering every query with the current claim's result pages."""

    def __init__(self, host: str, log: CallLog) -> None:
        super().__init__(host, log)
        self.results: list[tuple[str, Page]] = []  # set by the bench before each check

    def answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> _Answer:
        """Return the JSON results (none for a `site:` search: no fact-checker is local)."""
        query = parse_qs(urlsplit(path).query).get("q", [""])[0]
        hits = []
        if "site:" not in query:
            for n, (url, page) in enumerate(self.results):
                hits.append(
                    {
                        "url": url,
                        "title": page.title,
                        "content": page.text[:160],
                        "engine": "standin",
                        "score": 1.0 / (n + 1),
                    }
                )
        return _json({"query": query, "results": hits}, 0.0, "search")


def _settings(
    data_dir: Path, search: ResultsStandin, hosts: list[str], verifier: dict[str, float]
) -> Any:
    from bots.settings import (
        FetchSettings,
        RetrievalSettings,
        SearchSettings,
        Settings,
        VerifierSettings,
    )

    return Settings(
        data_dir=data_dir,
        log_level="WARNING",
        search=SearchSettings(
            providers=["searxng"],
            searxng_url=search.base,
            pages_per_claim=PAGES_PER_CLAIM,
            results_per_provider=PAGES_PER_CLAIM + 2,
        ),
        fetch=FetchSettings(allowed_networks=tuple(f"{h}/32" for h in hosts)),
        verifier=VerifierSettings(judge="verifier", **verifier),
        # The stand-in publishers are unrated loopback hosts found by web search.
        retrieval=RetrievalSettings(unrated_sources="allow"),
    )


class _Recorder:
    """Keeps the verifier's last readings with what the bench reports about each."""

    def __init__(self, verifier: Any) -> None:
        self.last: list[dict[str, Any]] = []
        decide = verifier.decide

        async def recording(claims: Any, evidence: Any) -> Any:
            decided = await decide(claims, evidence)
            by_id = {e.id: e for e in evidence}
            self.last = [
                {
                    "supports": round(r.stance.supports, 4),
                    "refutes": round(r.stance.refutes, 4),
                    "relevance": by_id[r.evidence_id].relevance,
                    "url": by_id[r.evidence_id].document.url,
                    "quote": r.stance.quote[:200],
                    "text": by_id[r.evidence_id].passage.text,
                }
                for r in decided.readings
            ]
            return decided

        verifier.decide = recording


async def _check(app: Any, recorder: _Recorder, item: dict[str, Any]) -> dict[str, Any]:
    from pipeline.errors import EmptyPostError
    from pipeline.inputs.posts import post_from_text

    recorder.last = []
    start = time.monotonic()
    try:
        check = await app.check(post_from_text(item["claim"], max_chars=2000))
    except EmptyPostError as exc:
        return {"id": item["id"], "kind": item["kind"], "label": "refused", "why": str(exc)}
    claims = check.verdict.claims
    return {
        "id": item["id"],
        "kind": item["kind"],
        "claim": item["claim"],
        "label": check.verdict.label.value,
        "basis": [c.basis.value for c in claims],
        "rationale": [c.rationale[:200] for c in claims],
        "reply": check.correction.text[:400] if check.correction else "",
        "seconds": round(time.monotonic() - start, 2),
        "readings": recorder.last,
    }


def run(
    items: Sequence[dict[str, Any]],
    pool: Sequence[dict[str, Any]],
    verifier: dict[str, float] | None = None,
) -> list[dict[str, Any]]:
    """Check each item through the App against the stand-ins; return one record per item."""
    from bots.app.root import App

    log = CallLog()
    with ExitStack() as stack:
        sites = [
            SiteStandin(host, log, name=name, pages={})
            for host, name in (("127.0.0.2", "Reference Library"), ("127.0.0.3", "Daily News"))
        ]
        search = ResultsStandin("127.0.0.1", log)
        stack.enter_context(serving(*sites, search))
        hosts = ["127.0.0.1", "127.0.0.2", "127.0.0.3"]
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="factbot-web-")))
        app = App(_settings(tmp, search, hosts, verifier or {}))
        stack.callback(app.close)
        recorder = _Recorder(app.resources.verifier)

        async def go() -> list[dict[str, Any]]:
            await app.start(warm=True)
            found = []
            try:
                for item in items:
                    pages = result_pages(item, pool)
                    for page in pages:
                        sites[page.site].pages[page.path] = page
                    search.results = [(sites[p.site].base + p.path, p) for p in pages]
                    found.append(await _check(app, recorder, item))
            finally:
                await app.close_fetcher()
            return found

        return asyncio.run(go())


def summarise(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Return per kind: the labels, the goal's share with its Wilson interval, the failures."""
    figures: dict[str, Any] = {}
    for kind, (goal, _) in GOALS.items():
        mine = [r for r in records if r["kind"] == kind]
        if not mine:
            continue
        labels = Counter(r["label"] for r in mine)
        n = len(mine)
        accurate = labels.get("accurate", 0)
        entry: dict[str, Any] = {"n": n, "labels": dict(labels.most_common())}
        if goal is not None:
            hit = labels.get(goal, 0)
            entry[goal] = {
                "share": round(hit / n, 3),
                "wilson": [round(x, 3) for x in wilson(hit, n)],
            }
        if kind != "support":
            entry["accurate"] = {
                "count": accurate,
                "wilson": [round(x, 3) for x in wilson(accurate, n)],
            }
        entry["failures"] = [
            {"id": r["id"], "label": r["label"], "basis": r.get("basis")}
            for r in mine
            if (goal is not None and r["label"] != goal)
            or (kind != "support" and r["label"] == "accurate")
        ]
        figures[kind] = entry
    return figures


def met(figures: dict[str, Any]) -> bool:
    """Return whether the issue's goals hold on these figures."""
    ok = True
    for kind, (goal, share) in GOALS.items():
        entry = figures.get(kind)
        if entry is None:
            continue
        if goal is not None and share is not None and entry[goal]["share"] < share:
            ok = False
        if kind != "support" and entry["accurate"]["count"]:
            ok = False
    return ok


@click.command()
@click.option("--data", type=click.Path(exists=True, path_type=Path), default=DATA)
@click.option(
    "--half",
    type=click.Choice(["calibration", "reported", "all"]),
    default="reported",
    show_default=True,
)
@click.option("--only", help="Comma-separated item ids (a quick look at a few).")
@click.option(
    "--set",
    "overrides",
    multiple=True,
    help="A verifier setting for the run, e.g. --set support=0.8 (FACTBOT_VERIFIER__SUPPORT).",
)
@click.option("--report", "report_path", type=click.Path(path_type=Path), help="Write JSON here.")
def main(
    data: Path, half: str, only: str | None, overrides: tuple[str, ...], report_path: Path | None
) -> None:
    """Check the set's claims through the real check path; print the figures per kind."""
    items = read_items(data)
    pool = [i for i in items if half == "all" or i["half"] == half]
    chosen = [i for i in pool if not only or i["id"] in only.split(",")]
    verifier = {k: float(v) for k, _, v in (o.partition("=") for o in overrides)}
    records = run(chosen, pool, verifier)
    figures = summarise(records)
    click.echo(json.dumps({"half": half, "figures": figures, "met": met(figures)}, indent=2))
    if report_path:
        report = {"half": half, "figures": figures, "records": records}
        report_path.write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
