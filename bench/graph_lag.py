"""`python -m bench.graph_lag`: what a burst of graph verification does to the event loop.

A burst of `--checks` graph verifications (real spaCy and MiniLM; AVeriTeC dev claims against
their own evidence passages) is started at once, as a burst of mentions starts checks, while
two probes run on the loop:

- loop lag: a task that sleeps 10 ms and records how late it woke (what delays discord.py's
  heartbeat and every other callback);
- pool wait: every 100 ms a trivial job goes to the shared CPU pool (where page extraction
  and embeddings run) and its wait is recorded: graph work queued on every pool thread makes
  that work wait for the whole burst.

Run twice: graph work on the shared CPU pool (before: `GraphVerifier(threads=None)`), and on
its own one-thread pool (after: the service's default, FACTBOT_GRAPH__THREADS=1).
"""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
import numpy as np

from bots.evaluation.averitec import load_averitec
from pipeline.embedding.embedder import SentenceTransformerEmbedder
from pipeline.evidence.chunking import chunk_text
from pipeline.graph.build import GraphBuilder
from pipeline.graph.verify import GraphVerifier
from pipeline.records.domain import Claim, Evidence, Passage, Tier
from pipeline.util.cpu import CpuPool

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "eval" / "averitec" / "dev.json"


def _work(n: int) -> list[tuple[list[Claim], list[Evidence]]]:
    """Return n (claims, evidence) pairs from AVeriTeC dev."""
    items: list[tuple[list[Claim], list[Evidence]]] = []
    for eval_claim in load_averitec(DATA):
        if not eval_claim.documents:
            continue
        claim = Claim(id=f"c{eval_claim.index}", post_id="p", position=0, text=eval_claim.text)
        evidence = [
            Evidence(
                id=f"e{eval_claim.index}.{k}.{j}",
                claim_id=claim.id,
                passage=Passage(id=f"p{k}.{j}", document_id=doc.id, position=j, text=text),
                document=doc,
                relevance=0.8,
                tier=Tier.HIGH,
            )
            for k, doc in enumerate(eval_claim.documents[:3])
            for j, text in enumerate(chunk_text(doc.text)[:2])
        ]
        items.append(([claim], evidence))
        if len(items) == n:
            break
    return items


def _figures(values: list[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    arr = np.array(values) * 1000
    return {
        "n": len(values),
        "p50_ms": round(float(np.percentile(arr, 50)), 1),
        "p95_ms": round(float(np.percentile(arr, 95)), 1),
        "max_ms": round(float(arr.max()), 1),
    }


async def _burst(
    verifier: GraphVerifier, cpu: CpuPool, work: list[tuple[list[Claim], list[Evidence]]]
) -> dict[str, Any]:
    lags: list[float] = []
    waits: list[float] = []
    done = asyncio.Event()

    async def loop_probe() -> None:
        while not done.is_set():
            start = time.perf_counter()
            await asyncio.sleep(0.01)
            lags.append(max(0.0, time.perf_counter() - start - 0.01))

    async def pool_probe() -> None:
        while not done.is_set():
            start = time.perf_counter()
            await cpu.run(time.perf_counter)
            waits.append(time.perf_counter() - start)
            await asyncio.sleep(0.1)

    reference = datetime(2024, 1, 1, tzinfo=UTC)
    probes = [asyncio.create_task(loop_probe()), asyncio.create_task(pool_probe())]
    start = time.perf_counter()
    await asyncio.gather(
        *(verifier.verify_claims(c, e, reference=reference, cpu=cpu) for c, e in work)
    )
    seconds = time.perf_counter() - start
    done.set()
    await asyncio.gather(*probes)
    return {
        "seconds": round(seconds, 2),
        "loop_lag": _figures(lags),
        "pool_wait": _figures(waits),
    }


@click.command()
@click.option("--checks", type=int, default=40, show_default=True, help="Verifications at once.")
@click.option("--cpu-threads", type=int, default=2, show_default=True, help="Shared pool size.")
@click.option("--report", "report_path", type=click.Path(path_type=Path), help="Write JSON here.")
def main(checks: int, cpu_threads: int, report_path: Path | None) -> None:
    """Measure loop lag and shared-pool wait during a burst of graph verifications."""
    work = _work(checks)
    builder = GraphBuilder()
    report: dict[str, Any] = {"checks": len(work), "cpu_threads": cpu_threads}
    for name, threads in (("shared pool (before)", None), ("own 1-thread pool (after)", 1)):
        cpu = CpuPool(cpu_threads)
        embedder = SentenceTransformerEmbedder(cpu=cpu)
        verifier = GraphVerifier(builder, embedder, threads=threads)
        # warm up: load spaCy and MiniLM outside the measurement
        asyncio.run(_burst(verifier, cpu, work[:1]))
        report[name] = asyncio.run(_burst(verifier, cpu, work))
        verifier.close()
        cpu.close()
    click.echo(json.dumps(report, indent=2))
    if report_path is not None:
        report_path.write_text(json.dumps(report, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
