"""The sums /metrics reads from stored checks: exact at bucket bounds, additive over ranges."""

from __future__ import annotations

import pytest

from pipeline.records.domain import Check, Correction, Label, ModelUsage, Post, StageTiming, Verdict
from pipeline.records.search_status import LiveSearch, ProviderStatus, SearchStatus
from storage import Store

BOUNDS = (0.5, 1.0, 300.0)


def _check(n: int, label: Label, judge: str, **fields: object) -> Check:
    post = Post(id=f"p{n}", platform="api", platform_id=f"p{n}", text="Some claim.")
    return Check(
        id=f"c{n}",
        post=post,
        claims=(),
        evidence=(),
        verdict=Verdict(label=label, claims=()),
        correction=Correction(label=label, headline="This post is ..."),
        judge=judge,
        **fields,  # type: ignore[arg-type]
    )


def test_sums_bin_stage_seconds_at_their_bounds_and_add_up_over_ranges(store: Store) -> None:
    web = (ProviderStatus("brave", False, "HTTP 503"), ProviderStatus("searxng", True))
    store.checks.save(
        _check(
            1,
            Label.FALSE,
            "model",
            timings=(StageTiming("claims", 0.5), StageTiming("judgement", 0.6)),
            usage=(ModelUsage("judge", 2, 1000, 80, 0.002, 3.0, failures=1),),
            search=SearchStatus(live=LiveSearch.PARTIAL, providers=web),
        )
    )
    first = store.metrics.last_check()
    store.checks.save(_check(2, Label.ACCURATE, "no-model", timings=(StageTiming("claims", 400),)))
    store.checks.save(_check(3, Label.FALSE, "no-model"))  # no stage timings at all
    last = store.metrics.last_check()
    whole = store.metrics.check_sums(0, last, BOUNDS)
    assert whole.checks == {
        ("false", "model"): 1,
        ("accurate", "no-model"): 1,
        ("false", "no-model"): 1,
    }
    claims = whole.stages["claims"]
    assert claims.buckets == (1, 1, 1) and claims.count == 2 and claims.total == 400.5
    assert whole.stages["judgement"].buckets == (0, 1, 1)
    # A check's duration is its stages summed; one with none took 0 s.
    assert whole.duration.buckets == (1, 1, 2) and whole.duration.count == 3
    assert whole.duration.total == pytest.approx(401.1)
    [judge] = whole.model
    assert (judge.stage, judge.calls, judge.input_tokens, judge.output_tokens) == (
        "judge",
        2,
        1000,
        80,
    )
    assert judge.cost_usd == 0.002 and judge.failures == 1
    found = {(p.provider, p.kind): (p.checks, p.failures) for p in whole.search}
    assert found == {("brave", "web"): (1, 1), ("searxng", "web"): (1, 0)}
    assert whole.live == {"partial": 1, "off": 2}
    # The cursor splits the table without losing or repeating a check.
    before, after = (
        store.metrics.check_sums(0, first, BOUNDS),
        store.metrics.check_sums(first, last, BOUNDS),
    )
    assert sum(before.checks.values()) == 1 and sum(after.checks.values()) == 2
    assert before.stages["claims"].count + after.stages["claims"].count == claims.count
    assert store.metrics.check_sums(last, last, BOUNDS).duration.count == 0
