"""What `factbot check` replies to posts that repeat a published fact-check (issue 50's goals).

    FACTBOT_DATA_DIR=<a data folder with the feed imported> FACTBOT_SEARCH__ENABLED=false \\
        python -m bench.factcheck_replies --posts ../shared/data/eval/checkthat2a/dev.jsonl

Each post is checked end to end by the real App (the embedded default: the local index, the
verifier, the fact-check stage), as `factbot check` does. Printed as JSON, with Wilson 95 %
intervals: the share of replies whose references include the post's gold fact-check
(`cites_gold`), the share answered from a match (a claim decided by a review), and among those
the share whose overall verdict equals the gold review's mapped label (`verdict_agreement`,
where the gold reviews have a rating factbot reads), with the check's p50/p95 seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

import numpy as np

from bots.app.root import App
from bots.evaluation.claim_matching import read_posts, wilson
from bots.settings import load_settings
from pipeline.errors import FactbotError
from pipeline.inputs.posts import post_from_text
from pipeline.records.domain import Basis


async def run(posts_path: Path, limit: int | None) -> dict[str, object]:
    """Check every post and return the figures."""
    app = App(load_settings())
    posts = read_posts(posts_path)[:limit]
    index = app.resources.store.fact_checks
    labels = {}
    for post in posts:
        for url in post.gold:
            found = index.fact_check_by_url(url)
            labels[url] = found[1].label if found else None
    cites = matched = agree = rated = refused = 0
    seconds = []
    try:
        for post in posts:
            started = time.perf_counter()
            try:
                check = await app.check(post_from_text(post.text, max_chars=100_000))
            except FactbotError:  # no check-worthy sentence: no reply, counted as not citing
                refused += 1
                continue
            seconds.append(time.perf_counter() - started)
            urls = {r.url for r in check.correction.references}
            cites += bool(urls & set(post.gold))
            if any(cv.basis is Basis.REVIEW for cv in check.verdict.claims):
                matched += 1
                wanted = {labels.get(u) for u in post.gold} - {None}
                if wanted:
                    rated += 1
                    agree += check.verdict.label in wanted
    finally:
        await app.aclose()
    n = len(posts)
    return {
        "posts": n,
        "refused_as_not_checkable": refused,
        "cites_gold": round(cites / n, 4) if n else None,
        "cites_gold_ci": wilson(cites, n),
        "answered_from_a_match": round(matched / n, 4) if n else None,
        "answered_from_a_match_ci": wilson(matched, n),
        "verdict_agreement": round(agree / rated, 4) if rated else None,
        "verdict_agreement_ci": wilson(agree, rated),
        "verdict_agreement_posts": rated,
        "check_p50_s": round(float(np.percentile(seconds, 50)), 2) if seconds else None,
        "check_p95_s": round(float(np.percentile(seconds, 95)), 2) if seconds else None,
    }


def main() -> None:
    """Run the benchmark and print its figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--posts", type=Path, required=True)
    parser.add_argument("--limit", type=int)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args.posts, args.limit)), indent=2))


if __name__ == "__main__":
    main()
