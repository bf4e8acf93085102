"""The web-evidence bench's fast gate (issue 51): a few claims through the real check path.

A plain page stating the claim among a dozen other pages (one sharing a phrase with it) makes
it accurate; a page that only reports a claim as hearsay never does; a debunking page never
does. The whole set is `python -m bench.web_evidence` (docs/results/2026-12-08-…).
"""

from __future__ import annotations

from bench.web_evidence import read_items, run, summarise


def test_plain_support_is_accurate_and_reports_or_debunks_never_are() -> None:
    items = read_items()
    pool = [i for i in items if i["half"] == "calibration"]
    chosen = [i for i in pool if i["id"] in ("s03", "s17", "r13", "d01")]
    records = {r["id"]: r for r in run(chosen, pool)}
    assert records["s03"]["label"] == "accurate"  # the traced case: a phrase no longer vetoes
    assert records["s17"]["label"] == "accurate"
    assert records["r13"]["label"] != "accurate"  # "a widely shared video says …"
    assert records["d01"]["label"] == "false"
    figures = summarise(list(records.values()))
    assert figures["reports"]["accurate"]["count"] == 0
