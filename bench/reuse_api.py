"""Request to answer on the reuse path, over real HTTP (`python -m bench.reuse_api`).

A temporary database gets the test corpus; `factbot serve`'s API (with its workers) runs on
loopback in this process. Each of `--posts` claims is checked once (`?wait`), then every claim is
posted again `--repeats` times as typed (``same text``) and as a re-share with a link and
hashtags (``near``). Each request is timed from sending to the parsed answer; a request that is
not answered from the stored check counts as a miss (the figure that can come out otherwise).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from bots.app.root import App
from bots.settings import SearchSettings, Settings
from bots.web import create_web
from pipeline.evidence.ingest import Ingester

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "corpus.jsonl"
# Claims the test corpus has evidence about (a check without any evidence is never reused).
CLAIMS = [
    "5G networks spread the coronavirus.",
    "Drinking bleach protects you against COVID-19.",
    "Hydroxychloroquine cures hospitalized COVID-19 patients, a large study shows.",
    "The vaccine trial showed 95 percent efficacy against COVID-19.",
    "A heatwave brought record temperatures to London in July 2022.",
]


def _quantiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)

    def pick(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return {
        "p50_ms": round(pick(0.5) * 1000, 2),
        "p95_ms": round(pick(0.95) * 1000, 2),
        "mean_ms": round(statistics.fmean(ordered) * 1000, 2),
    }


def measure(posts: int, repeats: int) -> dict[str, Any]:
    """Check `posts` claims once, then time `repeats` repeats of each, exact and re-shared."""
    with tempfile.TemporaryDirectory() as tmp:
        # The local index only: a benchmark never reaches the internet.
        app = App(Settings(data_dir=Path(tmp) / "data", search=SearchSettings(enabled=False)))
        asyncio.run(Ingester(app.store.documents, app.embedder).ingest([str(CORPUS)]))
        server = uvicorn.Server(
            uvicorn.Config(create_web(app), host="127.0.0.1", port=0, log_level="warning")
        )
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)
        base = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
        timings: dict[str, list[float]] = {"same text": [], "near": []}
        misses = {"same text": 0, "near": 0}
        try:
            with httpx.Client(base_url=base, timeout=120) as client:
                first = []
                for claim in CLAIMS[:posts]:
                    started = time.perf_counter()
                    answer = client.post("/api/checks?wait=120", json={"text": claim})
                    first.append(time.perf_counter() - started)
                    assert answer.status_code == 201, answer.text
                for n in range(repeats):
                    for claim in CLAIMS[:posts]:
                        variants = {
                            "same text": claim.upper(),
                            "near": f"RT {claim} https://t.co/x{n} #covid #share",
                        }
                        for kind, text in variants.items():
                            started = time.perf_counter()
                            answer = client.post("/api/checks", json={"text": text})
                            body = answer.json()
                            timings[kind].append(time.perf_counter() - started)
                            if answer.status_code != 200 or "reused" not in body:
                                misses[kind] += 1
        finally:
            server.should_exit = True
            thread.join(timeout=30)
            app.close()
    return {
        "posts": posts,
        "repeats": repeats,
        "first_check_s": round(statistics.fmean(first), 2),
        **{
            kind: {**_quantiles(values), "requests": len(values), "not_reused": misses[kind]}
            for kind, values in timings.items()
        },
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Print the request-to-answer figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--posts", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=40)
    args = parser.parse_args(argv)
    print(json.dumps(measure(min(args.posts, len(CLAIMS)), args.repeats), indent=2))


if __name__ == "__main__":
    main()
