"""Community Notes end to end: the eligible-posts feed read through tweepy, each candidate
checked by the real pipeline, then `x:note` writes, scores (its URLs fetched on loopback through
the SSRF-safe fetcher), evaluates and submits the note; `x:notes-status` records its rating.

The monitor's part (scheduling, routing) is stood in for by what it calls: the adapter's
candidate source, `submit_check` and `enqueue_note`.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from bots.platforms.x._client import Limits
from bots.platforms.x._sources import NOTES_FEED
from bots.runtime.checking.check_jobs import submit_check
from storage.x_notes import XNotesRepo, enqueue_note, enqueue_notes_status, notes_summary
from tests.bots.platforms.x.conftest import ALICE, XBot
from tests.support.fake_x import FakeX

FEED = {
    "1000": "5G networks spread the coronavirus.",
    "1010": "Drinking bleach protects you against COVID-19.",
    "1011": "Hydroxychloroquine cures hospitalized COVID-19 patients.",
}


async def _notes_for_feed(bot: XBot, fake: FakeX, *, notes_off: bool = False) -> list[Any]:
    for post_id, text in FEED.items():
        if post_id not in fake.tweets:
            fake.add_tweet(post_id, ALICE, text)
    fake.eligible = list(FEED)
    [source] = [s for s in bot.adapter.candidate_sources() if s.name == NOTES_FEED]
    batch = await source.fetch(None, 10)
    assert {c.post.platform_id for c in batch.candidates} == set(FEED)
    if notes_off:
        bot.app.settings.x.notes_enabled = False  # switched off after the feed was read
    for candidate in batch.candidates:
        submitted = submit_check(
            bot.app.store, candidate.post, dedupe_key=f"monitor:x:{candidate.post.platform_id}"
        )
        enqueue_note(
            bot.app.store.jobs,
            check_id=submitted.check_id,
            check_job=submitted.job.id,
            post_id=candidate.post.platform_id,
            key=f"monitor:x:{candidate.post.platform_id}",
        )
    await bot.drain()
    return XNotesRepo(bot.app.store.db).recent()


async def test_the_eligible_feed_gets_scored_notes_submitted_in_test_mode(
    make_bot: Any, fake: FakeX
) -> None:
    bot: XBot = await make_bot(fake, notes_enabled=True)
    notes = await _notes_for_feed(bot, fake)
    [feed_call] = fake.calls("eligible")
    assert feed_call.query["test_mode"] == "true"
    assert feed_call.query["post_selection"] == "feed_size:small,feed_lang:en"
    assert notes, "no note was written for the false posts of the feed"
    retrieved = bot.retrieved()
    for note in notes:
        assert 1 <= len(note.text) <= 280 and "(match" not in note.text
        assert note.urls and set(note.urls) <= retrieved
        assert all(url in note.text for url in note.urls)
        assert note.url_validity == "high"  # every URL answered 200 on loopback
        assert note.harassment_abuse == "high"
        assert note.classification == "misinformed_or_potentially_misleading"
        assert note.misleading_tags and note.misleading_tags[0] in (
            "factual_error",
            "missing_important_context",
        )
    submitted = [n for n in notes if n.status == "submitted"]
    assert submitted and all(n.claim_opinion_score == 0.8 for n in submitted)
    assert {n.post_id for n in fake.notes} == {n.post_id for n in submitted}
    for received in fake.notes:
        assert received.test_mode is True
        assert received.body["info"]["trustworthy_sources"] is True
    assert len(fake.calls("evaluate")) == len(submitted)
    seen = {url for n in notes for url in n.urls}
    assert {p.rstrip("/") for p in bot.pages.seen} >= {"/" + url.split("/", 3)[3] for url in seen}
    # a second x:note job for the same post writes nothing more
    _, created = enqueue_note(
        bot.app.store.jobs, check_id="c", check_job=None, post_id=notes[0].post_id, key="k"
    )
    assert not created


@pytest.mark.slow  # a real check over the index: 10-20 s here
async def test_notes_status_is_recorded_and_summarized(make_bot: Any, fake: FakeX) -> None:
    bot: XBot = await make_bot(fake, notes_enabled=True)
    notes = await _notes_for_feed(bot, fake)
    first = next(n for n in notes if n.status == "submitted")
    fake.set_note_status(
        first.post_id,
        "currently_rated_helpful",
        UrlValidity="high",
        ClaimOpinion="medium",
        HarassmentAbuse="high",
    )
    enqueue_notes_status(bot.app.store.jobs, key="run-1")
    await bot.drain()
    repo = XNotesRepo(bot.app.store.db)
    updated = repo.for_post(first.post_id)
    assert updated is not None and updated.rating_status == "helpful"
    assert updated.evaluation == {
        "ClaimOpinion": "medium",
        "HarassmentAbuse": "high",
        "UrlValidity": "high",
    }
    summary = notes_summary(repo)
    assert summary.notes == len(notes) and summary.helpful == 1
    assert summary.url_validity_high == 1.0
    # the dashboard's route, mounted by the adapter
    api = FastAPI()
    bot.adapter.mount(api)
    transport = httpx.ASGITransport(app=api)
    async with httpx.AsyncClient(transport=transport, base_url="http://factbot") as client:
        answer = await client.get("/api/x/notes/summary")
    assert answer.status_code == 200
    assert answer.json()["helpful"] == 1 and answer.json()["notes"] == len(notes)


@pytest.mark.slow  # a real check over the index: 10-20 s here
async def test_notes_off_writes_and_scores_but_never_submits(make_bot: Any, fake: FakeX) -> None:
    bot: XBot = await make_bot(fake, notes_enabled=True)
    notes = await _notes_for_feed(bot, fake, notes_off=True)
    assert notes and all(n.status == "withheld" for n in notes)
    assert fake.notes == [] and fake.calls("evaluate") == []


@pytest.mark.slow  # a real check over the index: 10-20 s here
async def test_a_note_refused_by_x_is_rejected_not_retried(make_bot: Any, fake: FakeX) -> None:
    bot: XBot = await make_bot(fake, notes_enabled=True)
    fake.script("notes", 403, times=10, detail="client-not-enrolled")
    notes = await _notes_for_feed(bot, fake)
    assert notes and all(n.status == "rejected" for n in notes)
    assert all("client-not-enrolled" in (n.error or "") for n in notes)
    assert len(fake.calls("notes")) == len(notes)  # once each


@pytest.mark.slow  # a real check over the index: 10-20 s here
async def test_a_429_on_submit_is_retried_and_submits_once(make_bot: Any, fake: FakeX) -> None:
    bot: XBot = await make_bot(fake, notes_enabled=True)
    bot.adapter.api.keep = Limits(max_wait=0.0)  # no wait in place: the job is retried
    fake.script("notes", 429, reset_in=0)
    notes = await _notes_for_feed(bot, fake)
    submitted = [n for n in notes if n.status == "submitted"]
    assert submitted and len(fake.notes) == len(submitted)
    assert fake.calls("written"), "a retried submit first looks for a note already taken"
