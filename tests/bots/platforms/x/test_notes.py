"""The local admission scores of a Community Note, the tags mapping, and the summary."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from bots.cli.doctor import notes_lines
from bots.platforms.x._notes import harassment_abuse, tags_for, url_validity
from pipeline.communitynotes.admission import NOT_ENOUGH, standing
from pipeline.fetch.fetcher import Fetcher, FetchPolicy
from pipeline.records.domain import Label
from storage import Store
from storage.x_notes import XNote, XNotesRepo, standing_at, summarize
from tests.conftest import fresh_database
from tests.support.httpserver import Response, serve

CLAIM = "5G networks spread the coronavirus."


def test_abuse_and_aimed_handles_score_low() -> None:
    assert harassment_abuse("5G does not spread viruses. https://a.example")[0] == "high"
    assert harassment_abuse("Only an idiot believes 5G spreads viruses.")[0] == "low"
    assert harassment_abuse("@alice is wrong: 5G does not spread viruses.")[0] == "low"
    assert harassment_abuse("You people never check https://a.example/@x")[0] == "low"
    # a URL with an @ in it is not a handle
    assert harassment_abuse("See https://a.example/@user/post")[0] == "high"


def test_a_threat_is_abuse_but_a_health_warning_is_not() -> None:
    # the note on "Drinking bleach cures COVID-19" quoted a fact-check's headline and scored
    # low for the word "kill": the correction itself was read as a threat
    warning = "Rated false: “Bleach is a poison: drinking it does not cure COVID-19 and can kill”"
    assert harassment_abuse(warning)[0] == "high"
    assert harassment_abuse("Smoking can kill, and people who smoke die younger.")[0] == "high"
    for threat in ("go die", "I will kill you", "hope you die in a fire", "kill yourself"):
        assert harassment_abuse(f"5G does not spread viruses, {threat}.")[0] == "low", threat


def test_tags_follow_the_verdict_and_its_reasons() -> None:
    assert tags_for(Label.FALSE, "rated false", has_media=False) == ("factual_error",)
    assert tags_for(Label.MISLEADING, "the figures are outdated", has_media=False) == (
        "missing_important_context",
        "outdated_information",
    )
    assert "manipulated_media" in tags_for(Label.FALSE, "the photo was edited", has_media=True)
    assert "manipulated_media" not in tags_for(Label.FALSE, "the photo was edited", has_media=False)
    assert "misinterpreted_satire" in tags_for(
        Label.FALSE, "a satire site wrote it", has_media=False
    )


async def test_url_validity_is_high_only_when_every_url_answers_200() -> None:
    with serve() as server:
        good = server.add("/ok", "<html><body>ok</body></html>")
        server.route("/gone", Response(404, b"gone"))
        missing = good.replace("/ok", "/gone")
        async with Fetcher(FetchPolicy(allowed_networks=("127.0.0.1/32",))) as fetcher:
            assert (await url_validity([good], fetcher))[0] == "high"
            level, detail = await url_validity([good, missing], fetcher)
            assert level == "low" and detail["urls"][good] == 200
            assert "404" in str(detail["urls"][missing])
            assert (await url_validity([], fetcher))[0] == "low"
        # without the loopback allowance the SSRF guard refuses it: low, never fetched
        async with Fetcher() as guarded:
            level, detail = await url_validity([good], guarded)
            assert level == "low"


def _note(n: int, **fields: object) -> XNote:
    base: dict[str, object] = {
        "id": f"n{n}",
        "post_id": str(1000 + n),
        "check_id": None,
        "job_id": None,
        "text": "t https://a.example",
        "classification": "misinformed_or_potentially_misleading",
        "misleading_tags": ("factual_error",),
        "trustworthy_sources": True,
        "urls": ("https://a.example",),
        "url_validity": "high",
        "claim_opinion": "high",
        "harassment_abuse": "high",
        "score_detail": {},
        "test_mode": True,
        "status": "submitted",
        "api_note_id": str(n),
        "claim_opinion_score": 0.5,
        "rating_status": None,
        "evaluation": {},
        "error": None,
        "created_at": datetime(2026, 1, 1, tzinfo=UTC),
        "updated_at": None,
    }
    base.update(fields)
    return XNote(**base)  # type: ignore[arg-type]


def test_the_summary_applies_the_admission_thresholds() -> None:
    good = [_note(n) for n in range(50)]
    assert summarize(good).meets_admission
    one_bad_url = [*good[:46], *(_note(n, url_validity="low") for n in range(46, 50))]
    summary = summarize(one_bad_url)
    assert summary.url_validity_high == 0.92 and not summary.meets_admission
    assert summary.admission.failing == ("UrlValidity high 92 % < 95 %",)
    mostly_low = [_note(n, claim_opinion="low" if n < 20 else "high") for n in range(50)]
    assert not summarize(mostly_low).meets_admission  # 40 % low > 30 %
    rated = [
        _note(0, rating_status="helpful"),
        _note(1, rating_status="not_helpful"),
        _note(2, rating_status="helpful"),
        _note(3),
    ]
    s = summarize(rated)
    assert (s.helpful, s.not_helpful, s.hit_rate) == (2, 1, 1 / 3)
    assert summarize([]).meets_admission is False


def test_admission_needs_fifty_submitted_notes() -> None:
    """Defect 4: 0 submitted and 2 rejected said `"meets_admission": true`."""
    rejected = [_note(n, status="rejected", api_note_id=None) for n in range(2)]
    summary = summarize(rejected)
    assert summary.submitted == 0 and summary.rejected == 2
    assert summary.meets_admission is False
    assert summary.to_json()["meets_admission"] is False
    assert summary.admission.state == NOT_ENOUGH == "not enough notes yet"
    # 49 perfect submitted notes are still not enough; the 50th decides
    assert summarize([_note(n) for n in range(49)]).admission.state == NOT_ENOUGH
    assert summarize([_note(n) for n in range(50)]).admission.state == "meets admission"
    # withheld and rejected notes never count toward the window
    mixed = [*(_note(n, status="withheld") for n in range(10)), *(_note(n) for n in range(45))]
    assert summarize(mixed).admission.notes == 45 and not summarize(mixed).meets_admission


def test_a_missed_threshold_is_not_shown_rounded_up_to_it() -> None:
    # 48 of 49 notes high on HarassmentAbuse read "HarassmentAbuse high 98% < 98 %"
    buckets = {"ClaimOpinion": "high", "UrlValidity": "high", "HarassmentAbuse": "high"}
    notes = [buckets] * 48 + [{**buckets, "HarassmentAbuse": "low"}]
    assert standing(notes).failing == ("HarassmentAbuse high 97.96 % < 98 %",)
    assert standing([buckets] * 50).failing == ()


def test_admission_from_xs_recorded_buckets_is_kept_apart() -> None:
    high = {"ClaimOpinion": "high", "UrlValidity": "high", "HarassmentAbuse": "high"}
    low = {**high, "ClaimOpinion": "low"}
    notes = [_note(n, evaluation=low if n % 2 else high) for n in range(50)]
    summary = summarize(notes)
    assert summary.admission.meets  # factbot's own scores: all high
    assert summary.admission_api.state == "does not meet admission"  # X's: half low
    assert summary.admission_api.claim_opinion_low == 0.5


def test_doctor_reads_the_standing_from_the_database(
    tmp_path: Path, migrated_database: Path
) -> None:
    path = fresh_database(migrated_database, tmp_path / "factbot.db")
    with Store.open(path) as store:
        repo = XNotesRepo(store.db)
        for n in range(2):
            repo.add(_note(n, status="rejected"))
    summary = standing_at(path)
    assert summary is not None and summary.rejected == 2 and not summary.meets_admission
    lines = "\n".join(notes_lines(summary.to_json()))
    assert "admission not enough notes yet" in lines
    assert "today: 0 of 250 notes a day" in lines
