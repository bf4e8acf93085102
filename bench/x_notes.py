"""Which posts get a Community Note, and whether the notes would pass X's admission (issue 52).

    python -m bench.x_notes [--limit N] [--kinds misleading,opinion] [--out figures.json]

The set (bench/data/x_notes_posts.jsonl, written for this benchmark) is 123 eligible posts:
misleading claims whose evidence is in the local index (English pages, and published
fact-checks in en, es, fr, de, pt, it and ru), accurate posts, opinions, jokes, and claims
nothing in the index speaks to, in those seven languages, each with the `lang` X gives it. The
evidence pages (bench/data/x_notes_pages.jsonl) and the fact-check articles
(bench/data/x_notes_factchecks.jsonl) are served by a loopback web server, rated high; the
pages are ingested into a fresh local index and the reviews into the fact-check index.

Each post is checked by the real App on the embedded default (the local index, the verifier,
the fact-check stage; no language model, no live search), then decided, written and scored by
the X adapter's own code (`bots.platforms.x._notes`): every URL fetched through the SSRF-safe
fetcher, ClaimOpinion measured by the stance model and the claim detector. Printed as JSON:

- ``notes`` by kind and ``decisions`` (write / no note needed / not enough evidence / no
  check-worthy statement) by kind;
- ``precision`` (notes on misleading posts / notes, Wilson 95 %) and ``recall`` on the
  misleading posts;
- ``over_280``, ``without_url``, ``url_not_retrieved``, ``url_not_200``,
  ``wrong_language``: notes breaking a rule (each must be 0); ``text_not_in_post_language``:
  notes whose words the language identifier reads as another language than the post's;
- ``admission``: the standing over the last 50 notes, in the order the set submits them, from
  factbot's own scorers through `pipeline.communitynotes.admission` (with fewer than 50 notes
  it says "not enough notes yet"), the shares over every note written, and ``at_49_notes``:
  the standing one note short of the window, which must say "not enough notes yet".
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from bots.app.root import App
from bots.evaluation.claim_matching import wilson
from bots.platforms.x._notes import score, write_note
from bots.settings import FetchSettings, SearchSettings, Settings
from pipeline.communitynotes.admission import WINDOW, standing
from pipeline.communitynotes.claimopinion import ClaimOpinionScorer
from pipeline.embedding.e5 import E5Embedder
from pipeline.errors import EmptyPostError
from pipeline.evidence.ingest import Ingester
from pipeline.factchecks.loading import import_fact_checks
from pipeline.fetch.fetcher import Fetcher
from pipeline.inputs.language import LanguageIdentifier
from pipeline.records.domain import Post, SourceRating, Tier, new_id
from pipeline.records.factchecks import FactCheck
from pipeline.records.labels import Label
from pipeline.reply.links import scrub_links
from pipeline.reply.thread import x_weighted
from pipeline.verifier.stance import StanceModel
from tests.support.httpserver import LocalServer, serve

DATA = Path(__file__).resolve().parent / "data"
POSTS = DATA / "x_notes_posts.jsonl"
PAGES = DATA / "x_notes_pages.jsonl"
REVIEWS = DATA / "x_notes_factchecks.jsonl"
NOTE_KINDS = ("misleading",)  # the only kind a note may be written on


@dataclass(frozen=True)
class Outcome:
    """What factbot did with one post."""

    post: dict[str, Any]
    decision: str
    reason: str
    note: dict[str, Any] | None


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _html(title: str, text: str) -> str:
    head = f"<head><title>{title}</title></head>"
    return f"<html>{head}<body><h1>{title}</h1><p>{text}</p></body></html>"


async def _index(app: App, pages: LocalServer, folder: Path) -> None:
    """Serve and ingest the pages, serve and import the fact-checks."""
    app.store.sources.upsert_many(
        [SourceRating("127.0.0.1", Tier.HIGH, "the benchmark's publishers", "manual")]
    )
    corpus = folder / "pages.jsonl"
    lines = []
    for page in _read(PAGES):
        url = pages.add(page["path"], _html(page["title"], page["text"]))
        doc = {k: page[k] for k in ("title", "publisher", "published_at", "text")}
        lines.append(json.dumps({**doc, "url": url}))
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    await Ingester(app.store.documents, app.embedder).ingest([str(corpus)])
    reviews = []
    for item in _read(REVIEWS):
        url = pages.add(item["path"], _html(item["headline"], item["claim_reviewed"]))
        reviews.append(
            FactCheck(
                url=url,
                claim_reviewed=item["claim_reviewed"],
                publisher=item["publisher"],
                publisher_site="127.0.0.1",
                headline=item["headline"],
                review_date=datetime.fromisoformat(item["review_date"] + "T00:00:00+00:00"),
                language=item["language"],
                rating=item["rating"],
                label=Label(item["label"]),
            )
        )
    await import_fact_checks(
        reviews, index=app.resources.store.fact_checks, embedders=app.resources.fact_check_embedders
    )


async def _one(
    app: App,
    post: dict[str, Any],
    scorer: ClaimOpinionScorer,
    fetcher: Fetcher,
    identifier: LanguageIdentifier,
) -> Outcome:
    given = Post(
        id=new_id(), platform="x", platform_id=post["id"], text=post["text"], language=post["lang"]
    )
    try:
        check = await app.check(given)
    except EmptyPostError:
        return Outcome(post, "no check-worthy statement", "the claim detector found none", None)
    plan, draft = await asyncio.to_thread(
        write_note, check, language=post["lang"], stance=scorer.stance
    )
    if draft is None:
        return Outcome(post, plan.decision.value, plan.reason, None)
    scores = await score(draft, fetcher, scorer)
    retrieved = {r.url for r in check.correction.references}
    note = {
        "text": draft.text,
        "chars": x_weighted(draft.text),
        "urls": list(draft.urls),
        "retrieved": all(u in retrieved for u in draft.urls),
        "url_statuses": scores.detail.get("urls", {}),
        "language": draft.language,
        # what the note's words read as (its URLs aside), not only the catalogue it names
        "text_language": identifier.identify(scrub_links(draft.text)).code,
        "is_media_note": draft.is_media_note,
        "buckets": {
            "ClaimOpinion": scores.claim_opinion,
            "UrlValidity": scores.url_validity,
            "HarassmentAbuse": scores.harassment_abuse,
        },
        "claim_opinion_local": scores.detail.get("claim_opinion_local"),
        "passes": scores.passes,  # factbot's own gate: a note that fails it is withheld
        "tags": list(draft.misleading_tags),
    }
    return Outcome(post, plan.decision.value, plan.reason, note)


def figures(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """Return the benchmark's figures from the outcomes."""
    notes = [o for o in outcomes if o.note is not None]
    by_kind = Counter(o.post["kind"] for o in notes)
    decisions: dict[str, Counter[str]] = defaultdict(Counter)
    for o in outcomes:
        decisions[o.post["kind"]][o.decision] += 1
    right = sum(1 for o in notes if o.post["kind"] in NOTE_KINDS)
    misleading = sum(1 for o in outcomes if o.post["kind"] in NOTE_KINDS)
    written = [o.note for o in notes if o.note is not None]
    newest_first = [n["buckets"] for n in reversed(written)]
    stand = standing(newest_first)
    # the standing as it read one note short of the window (submission order: the set's)
    before = newest_first[-(WINDOW - 1) :] if len(newest_first) >= WINDOW - 1 else []
    return {
        "posts": len(outcomes),
        "posts_by_kind": dict(Counter(o.post["kind"] for o in outcomes)),
        "notes": len(notes),
        "notes_by_kind": dict(by_kind),
        "notes_by_language": dict(Counter(o.post["lang"] for o in notes)),
        "decisions": {k: dict(v) for k, v in sorted(decisions.items())},
        "precision": round(right / len(notes), 4) if notes else None,
        "precision_ci": wilson(right, len(notes)),
        "recall": round(right / misleading, 4) if misleading else None,
        "recall_ci": wilson(right, misleading),
        "over_280": sum(1 for n in written if n["chars"] > 280),
        "without_url": sum(1 for n in written if not n["urls"]),
        "url_not_retrieved": sum(1 for n in written if not n["retrieved"]),
        "url_not_200": sum(1 for n in written if any(s != 200 for s in n["url_statuses"].values())),
        "withheld_by_local_scores": [
            {"id": o.post["id"], "buckets": o.note["buckets"]}
            for o in notes
            if o.note is not None and not o.note["passes"]
        ],
        "internal_scores": sum(1 for n in written if "p =" in n["text"] or "stance" in n["text"]),
        "wrong_language": sum(
            1 for o in notes if o.note is not None and o.note["language"] != o.post["lang"]
        ),
        "text_not_in_post_language": [
            {"id": o.post["id"], "lang": o.post["lang"], "read_as": o.note["text_language"]}
            for o in notes
            if o.note is not None and o.note["text_language"] != o.post["lang"]
        ],
        "admission": {
            **stand.to_json(),
            "over_notes_written": standing(newest_first, window=len(newest_first)).to_json()
            if newest_first
            else None,
            "at_49_notes": standing(before).to_json() if before else None,
        },
        "missed": [
            {"id": o.post["id"], "lang": o.post["lang"], "decision": o.decision, "reason": o.reason}
            for o in outcomes
            if o.post["kind"] in NOTE_KINDS and o.note is None
        ],
        "examples": [
            {"id": o.post["id"], "post": o.post["text"], "note": o.note["text"]}
            for o in notes
            if o.note is not None
        ],
    }


async def run(
    limit: int | None = None, kinds: Sequence[str] = (), ids: Sequence[str] = ()
) -> dict[str, Any]:
    """Check every post of the set (or those of kinds, or of ids) and return the figures."""
    posts = [
        p for p in _read(POSTS) if (not kinds or p["kind"] in kinds) and (not ids or p["id"] in ids)
    ][:limit]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, serve() as pages:
        settings = Settings(
            data_dir=Path(tmp) / "data",
            fetch=FetchSettings(allowed_networks=("127.0.0.1/32",)),
            search=SearchSettings(enabled=False),
        )
        app = App(settings)
        try:
            await _index(app, pages, Path(tmp))
            vs = settings.verifier
            stance = StanceModel(vs.model_dir, batch_size=vs.batch_size, threads=vs.threads)
            scorer = ClaimOpinionScorer(stance, E5Embedder(threads=vs.threads))
            identifier = LanguageIdentifier(preload=False)
            async with Fetcher(settings.fetch.policy()) as fetcher:
                outcomes = [await _one(app, p, scorer, fetcher, identifier) for p in posts]
        finally:
            await app.aclose()
    out = figures(outcomes)
    out["seconds"] = round(time.perf_counter() - started, 1)
    return out


def main() -> None:
    """Run the benchmark and print its figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int)
    parser.add_argument("--kinds", default="", help="comma-separated kinds (default: all)")
    parser.add_argument("--out", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    kinds = [k for k in args.kinds.split(",") if k]
    result = asyncio.run(run(args.limit, kinds))
    text = json.dumps(result, indent=2, ensure_ascii=False)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
