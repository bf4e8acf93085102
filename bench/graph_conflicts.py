"""`python -m bench.graph_conflicts`: the conflicts graph verification finds on AVeriTeC claims.

Each claim is verified against its own gold evidence (every passage of its documents, as the
gold mode of `factbot eval averitec` indexes them), with the service's graph verifier. A
conflict says "the evidence gives another date, place or number than the claim". On a claim
whose gold label is `accurate` (AVeriTeC "Supported") it is most likely a false alarm, and the
verdict rules turn such a claim from accurate into misleading. So the share of accurate claims
with a conflict is a proxy for the conflicts' false alarms, and the share of false claims with one
for how often they find something real. Run it on the claims outside the reported sample
(`--outside-sample 100`) to change how conflicts are found without tuning on reported data.

    python -m bench.graph_conflicts --outside-sample 100 --show 20
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import click

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "eval" / "averitec" / "dev.json"


def measure(data: Path, outside_sample: int | None, limit: int | None, show: int) -> dict[str, Any]:
    from bots.app.root import App
    from bots.evaluation.averitec import calibration_part, load_averitec
    from bots.settings import Settings
    from pipeline.evidence.chunking import chunk_text
    from pipeline.records.domain import Claim, Evidence, Passage, Tier

    claims = load_averitec(data, limit=limit)
    if outside_sample is not None:
        claims = calibration_part(claims, outside_sample, seed=0)
    with tempfile.TemporaryDirectory(prefix="factbot-graphs-") as tmp:
        app = App(Settings(data_dir=Path(tmp), log_level="WARNING"))
        graphs = app.resources.graphs
        if graphs is None:
            raise click.ClickException("graph verification is off (FACTBOT_GRAPH__ENABLED)")
        by_label: dict[str, Counter[str]] = defaultdict(Counter)
        shown: list[dict[str, Any]] = []
        try:
            for item in claims:
                claim = Claim(f"c{item.index}", "eval", 0, item.text)
                evidence: list[Evidence] = []
                for doc in item.documents:
                    for n, text in enumerate(chunk_text(doc.text)):
                        evidence.append(
                            Evidence(
                                id=f"{doc.id}:{n}",
                                claim_id=claim.id,
                                passage=Passage(f"{doc.id}:{n}", doc.id, n, text),
                                document=doc,
                                relevance=1.0,
                                tier=Tier.HIGH,
                            )
                        )
                counts = by_label[item.gold.value]
                counts["claims"] += 1
                if not evidence:
                    continue
                counts["with evidence"] += 1
                results = graphs.verify_sync([claim], evidence, None)
                if not results or not results[0].conflicts:
                    continue
                result = results[0]
                counts["with a conflict"] += 1
                for kind in {c.kind for c in result.conflicts}:
                    counts[f"with a {kind} conflict"] += 1
                if len(shown) < show:
                    shown.append(
                        {
                            "index": item.index,
                            "gold": item.gold.value,
                            "claim": item.text[:160],
                            "conflicts": [
                                f"{c.kind}: {c.claim_value} vs {c.evidence_value}"
                                for c in result.conflicts
                            ],
                        }
                    )
        finally:
            graphs.close()
            app.close()
    rates = {
        label: round(c["with a conflict"] / c["with evidence"], 3) if c["with evidence"] else None
        for label, c in by_label.items()
    }
    return {
        "claims": len(claims),
        "outside_sample": outside_sample,
        "by_gold_label": {label: dict(c) for label, c in sorted(by_label.items())},
        "share_with_a_conflict": dict(sorted(rates.items())),
        "examples": shown,
    }


@click.command()
@click.option("--data", type=click.Path(exists=True, path_type=Path), default=DATA)
@click.option("--outside-sample", type=click.IntRange(min=1), help="Only claims outside it.")
@click.option("--limit", type=int, help="Only the first N claims.")
@click.option("--show", type=int, default=10, show_default=True, help="Conflicts to print.")
@click.option("--report", "report_path", type=click.Path(path_type=Path), help="Write JSON here.")
def main(
    data: Path, outside_sample: int | None, limit: int | None, show: int, report_path: Path | None
) -> None:
    """Count the claims graph verification finds a conflict in, by gold label."""
    figures = measure(data, outside_sample, limit, show)
    click.echo(json.dumps(figures, indent=2))
    if report_path:
        report_path.write_text(json.dumps(figures, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
