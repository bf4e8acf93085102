"""`factbot bench latency` at a tiny size: one post, stand-ins answering in 50 ms."""

from __future__ import annotations

import json

from click.testing import CliRunner

from bench.cli_latency import latency
from bench.latency_posts import POSTS, TRANSLATED
from bench.standins import Call, ScriptedModel, busy_seconds, waves
from pipeline.inputs.language import LanguageIdentifier

TINY = ["--posts", "1", "--model-delay", "0.05", "--search-delay", "0.05"]
TINY += ["--page-delay", "0.05", "--robots-delay", "0.01", "--results", "3", "--sites", "3"]


def test_one_post_end_to_end_against_the_standins() -> None:
    result = CliRunner().invoke(latency, TINY)
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)
    (post,) = figures["parallel"]["per_post"]
    assert post["label"] == "false"
    assert post["claims"] == 2
    # claims -> extraction (one call per claim, in parallel) -> judge
    assert post["model_calls_by_stage"] == {"claims": 1, "extraction": 2, "judge": 1}
    assert post["model_calls_critical_path"] == 3
    assert post["searches"] > 0 and post["page_fetches"] > 0 and post["robots_fetches"] > 0
    assert {"claims", "web", "extraction", "judgement", "reachability"} <= set(
        post["stage_seconds"]
    )
    (serial,) = figures["serial"]["per_post"]
    # the same work, one request at a time: every model call is on the critical path
    assert serial["model_calls"] == post["model_calls"]
    assert serial["model_calls_critical_path"] == serial["model_calls"]
    assert serial["page_fetches"] == post["page_fetches"]
    # truly one request at a time, across kinds too: every request waits for the one before
    assert serial["search_waves"] == serial["searches"]
    assert serial["fetch_waves"] == serial["page_fetches"] + serial["robots_fetches"]
    assert figures["speedup_measured"] > 0 and figures["speedup_analytic"] > 0
    (worst,) = figures["worst"]["per_post"]
    # refinement ran (a second round stops when the stand-in search finds nothing new)
    assert worst["label"] == "unverifiable"
    assert worst["model_calls_by_stage"]["judge"] >= 2
    assert "judgement#1" in worst["stage_seconds"]
    assert worst["model_calls"] > post["model_calls"]
    # one model request at a time: every model call waited for the one before
    assert worst["model_calls_critical_path"] == worst["model_calls"]
    assert figures["goals"]["critical_path_model_calls_ok"] is True
    assert figures["goals"]["model_calls_ok"] is True


def test_waves_count_the_longest_chain_of_calls() -> None:
    parallel = [Call("model:extraction", 1.0, 2.0), Call("model:extraction", 1.1, 2.1)]
    calls = [Call("model:claims", 0.0, 1.0), *parallel, Call("model:judge", 2.2, 3.0)]
    assert waves(calls) == 3
    assert waves([Call("page", 0.0, 1.0), Call("page", 1.0, 2.0)]) == 2  # back to back
    assert waves([]) == 0


def test_busy_seconds_merge_overlapping_calls_within_the_window() -> None:
    calls = [Call("page", 0.0, 2.0), Call("page", 1.0, 3.0), Call("search", 5.0, 9.0)]
    assert busy_seconds(calls, 0.0, 6.0) == 4.0


def test_the_scripted_model_quotes_only_what_a_document_says() -> None:
    claim = POSTS[0].claims[0]
    model = ScriptedModel(POSTS[:1])
    user = (
        f"<claim>\n{claim.text}\n</claim>\n\n"
        f'<document n="1" url="http://a">\n[1] Intro.\n[2] {claim.fact}\n</document>\n\n'
        '<document n="2" url="http://b">\n[3] Something else entirely.\n</document>'
    )
    assert model.answer("extraction", user) == {"quotes": [{"sentences": [2], "stance": "refutes"}]}
    assert model.answer("unknown", user) is None


def test_the_translated_posts_are_in_their_languages() -> None:
    """`latency-local --language` checks posts that are what they say (the first five each)."""
    identifier = LanguageIdentifier()
    for code, texts in TRANSLATED.items():
        assert len(texts) == 5
        found = [identifier.identify(text).code.split("-")[0] for text in texts]
        assert found == [code] * 5, code
