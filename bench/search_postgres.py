"""Dashboard search on PostgreSQL: two-word searches over N stored checks (goal p95 <= 100 ms).

    python -m bench.search_postgres --checks 100000 --server postgresql://me@127.0.0.1:5432

A fresh database on that server (created, then dropped) gets N posts, checks and claims of
varied words by COPY (the check_text triggers run as they do for stored checks); the real
BrowseRepo then runs each search 30 times. Printed per search: how many matched (capped at
1,000), p50 and p95 in ms.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

from storage import Store
from storage.browse import CheckFilter

WORDS = (
    "vaccine moon election climate water tower virus border tax river bridge school army "
    "coffee bank storm flood wheat price doctor mayor train fire"
).split()
SEARCHES = ("vaccine moon", "tower bri", "zzzz nothing", "election")


def fill(store: Store, count: int, seed: int) -> None:
    """Store count posts, checks and claims (one claim a check) through COPY and one INSERT."""
    rng = random.Random(seed)
    with store.db.atomic():
        cur = store.db.connection.cursor()
        with cur.copy("COPY posts (id, platform, platform_id, text) FROM STDIN") as copy:
            for n in range(count):
                copy.write_row((f"p{n}", "slack", str(n), " ".join(rng.choices(WORDS, k=12))))
        cur.execute(
            "INSERT INTO checks (id, post_id, created_at, verdict, judge, correction, refs, "
            "timings) SELECT 'c' || substr(id, 2), id, to_char(now() - random() * "
            "interval '90 days', 'YYYY-MM-DD\"T\"HH24:MI:SS.US+00:00'), 'false', 'verifier', "
            "'x', '[]', '[]' FROM posts"
        )
        columns = "id, check_id, post_id, position, text, label, rationale, evidence_ids"
        with cur.copy(f"COPY claims ({columns}) FROM STDIN") as copy:
            for n in range(count):
                text = " ".join(rng.choices(WORDS, k=8))
                copy.write_row((f"k{n}", f"c{n}", f"p{n}", 0, text, "false", "", "[]"))
    store.db.execute("ANALYZE")


def main(count: int, server: str, runs: int) -> None:
    name = f"factbot_search_{count}_{time.monotonic_ns()}"
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    try:
        url = urlunsplit(urlsplit(server)._replace(path=f"/{name}"))
        with (
            tempfile.TemporaryDirectory() as tmp,
            Store.open(Path(tmp) / "node.db", database_url=url) as store,
        ):
            started = time.perf_counter()
            fill(store, count, seed=1)
            print(f"{count} checks stored in {time.perf_counter() - started:.1f} s")
            for query in SEARCHES:
                took = []
                for _ in range(runs):
                    at = time.perf_counter()
                    page = store.browse.checks(CheckFilter(query=query))
                    took.append((time.perf_counter() - at) * 1000)
                took.sort()
                p95 = took[min(len(took) - 1, int(0.95 * len(took)))]
                print(
                    f"{query!r}: {page.total}{'+' if page.capped else ''} matches, "
                    f"p50 {took[len(took) // 2]:.1f} ms, p95 {p95:.1f} ms"
                )
    finally:
        with psycopg.connect(server, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checks", type=int, default=100_000)
    parser.add_argument("--server", required=True, help="postgresql:// URL of a server")
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    main(args.checks, args.server, args.runs)
