"""The monitor's sources on X, read through tweepy from the stand-in."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from bots.platforms.x._client import XApi
from bots.platforms.x._community import NotesApi
from bots.platforms.x._events import media_note, note_leads
from bots.platforms.x._sources import NOTES_FEED, build_sources, feed_languages
from bots.runtime.monitor import monitor_handlers
from bots.runtime.monitor.candidates import SourceUnavailableError
from bots.runtime.monitor.scan import SCAN, ScanJobs
from bots.settings import MonitorSettings, Settings, XSettings
from pipeline.errors import ConfigError
from storage import Store
from storage.x_notes import ApiCosts
from tests.support.clock import FakeClock
from tests.support.fake_x import FakeX


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "x.db") as opened:
        yield opened


@pytest.fixture
async def fake() -> AsyncIterator[FakeX]:
    async with FakeX() as x:
        x.add_user("200", "alice", followers=5000)
        x.add_user("201", "carol", followers=7)
        x.add_tweet("1000", "200", "5G towers spread the virus #health", likes=40)
        x.add_tweet("1001", "201", "@factbot 5G towers again", likes=1)
        x.add_tweet("1002", "201", "unrelated cats")
        yield x


def sources_for(fake: FakeX, store: Store, **watch: object) -> list[object]:
    s = XSettings(bearer_token="t", api_base=fake.api_base, user_id="100", **watch)  # type: ignore[arg-type]
    return build_sources(s, XApi(s, ApiCosts(store.db)), FakeClock())  # type: ignore[return-value]


async def test_search_accounts_and_hashtags_become_candidates(fake: FakeX, store: Store) -> None:
    search, account, hashtag = sources_for(
        fake, store, watch_queries=["5G towers"], watch_accounts=["201"], watch_hashtags=["#health"]
    )
    assert [search.name, account.name, hashtag.name] == [  # type: ignore[attr-defined]
        "x:search:5G towers",
        "x:account:201",
        "x:hashtag:health",
    ]
    batch = await search.fetch(None, 10)  # type: ignore[attr-defined]
    by_id = {c.post.platform_id: c for c in batch.candidates}
    assert set(by_id) == {"1000", "1001"} and batch.cursor == "1001"
    assert by_id["1000"].followers == 5000 and by_id["1000"].engagement == 40
    assert by_id["1000"].topics == ("health",) and not by_id["1000"].mentions_bot
    assert by_id["1001"].mentions_bot  # X allows a reply only under this one
    assert by_id["1000"].destination.message_id == "1000" and by_id["1000"].thread_key == "1000"
    newer = await search.fetch("1001", 10)  # type: ignore[attr-defined]
    assert newer.candidates == [] and newer.cursor is None
    assert fake.calls("search")[-1].query["since_id"] == "1001"
    timeline = await account.fetch(None, 10)  # type: ignore[attr-defined]
    assert {c.post.platform_id for c in timeline.candidates} == {"1001", "1002"}
    tagged = await hashtag.fetch(None, 10)  # type: ignore[attr-defined]
    assert [c.post.platform_id for c in tagged.candidates] == ["1000"]
    assert fake.calls("search")[-1].query["query"] == "#health -is:retweet"
    assert ApiCosts(store.db).totals("x")["read"][0] == 5  # every post read is billed


async def test_the_notes_feed_is_a_source_only_when_notes_are_on(fake: FakeX, store: Store) -> None:
    assert sources_for(fake, store) == []
    [feed] = sources_for(fake, store, notes_enabled=True)
    assert feed.name == NOTES_FEED  # type: ignore[attr-defined]
    fake.eligible = ["1000"]
    batch = await feed.fetch(None, 5)  # type: ignore[attr-defined]
    assert [c.post.platform_id for c in batch.candidates] == ["1000"]
    assert "community-notes" in batch.candidates[0].topics and batch.cursor is None
    assert fake.calls("eligible")[0].query["test_mode"] == "true"


async def test_a_rate_limited_source_says_when_to_come_back(fake: FakeX, store: Store) -> None:
    [search] = sources_for(fake, store, watch_queries=["5G"])
    fake.script("search", 429, reset_in=300)
    with pytest.raises(SourceUnavailableError) as err:
        await search.fetch(None, 10)  # type: ignore[attr-defined]
    assert err.value.retry_after is not None and 290 <= err.value.retry_after <= 302
    fake.script("search", 503)
    with pytest.raises(SourceUnavailableError):
        await search.fetch(None, 10)  # type: ignore[attr-defined]


def test_half_set_oauth1_keys_say_which_are_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    from bots.settings import load_settings

    monkeypatch.setenv("FACTBOT_X__CONSUMER_KEY", "k")
    monkeypatch.setenv("FACTBOT_X__ACCESS_TOKEN", "secret-token-value")
    with pytest.raises(ConfigError) as err:
        load_settings()
    message = str(err.value)
    assert "FACTBOT_X__CONSUMER_SECRET" in message and "FACTBOT_X__ACCESS_TOKEN_SECRET" in message
    assert "secret-token-value" not in message


def test_x_is_on_with_a_user_token_and_lists_come_from_json(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert not Settings().x.configured
    monkeypatch.setenv("FACTBOT_X__BEARER_TOKEN", "t")
    monkeypatch.setenv("FACTBOT_X__WATCH_QUERIES", '["5g covid", "vaccine chip"]')
    s = Settings()
    assert s.x.configured and not s.x.oauth1
    assert s.x.watch_queries == ["5g covid", "vaccine chip"]
    monkeypatch.setenv("FACTBOT_X__WATCH_ACCOUNTS", '["@alice"]')
    with pytest.raises(ValueError, match="numeric user ids"):
        Settings()


@pytest.mark.parametrize("spelling", ["tweets", "posts"])
async def test_the_eligible_feed_brings_quoted_posts_long_text_and_leads(
    store: Store, spelling: str
) -> None:
    async with FakeX(spelling=spelling) as x:  # type: ignore[arg-type]
        x.add_user("200", "alice")
        x.add_tweet("900", "201", "Drinking bleach cures COVID-19, doctors confirm.")
        x.add_tweet(
            "901",
            "200",
            "This!",
            quoted="900",
            note_tweet={"text": "This! " + "Read it all. " * 30},
            suggested_source_links_with_counts=[
                {"url": "https://fda.example/bleach", "count": 2},
                {"url": "https://who.example/bleach", "count": 5},
            ],
            note_request_suggestions=[{"text": "see https://cdc.example/bleach."}],
        )
        x.add_tweet("902", "201", "Hola", lang="es")
        x.eligible = ["901", "902"]
        x.unknown_fields = {"matched_media_notes"}  # an X that does not know this field yet
        s = XSettings(bearer_token="t", api_base=x.api_base, user_id="100", notes_enabled=True)
        api = XApi(s, ApiCosts(store.db))
        [feed] = build_sources(s, api, FakeClock(), languages=["en", "es"])
        batch = await feed.fetch(None, 5)  # type: ignore[attr-defined]
        [candidate] = batch.candidates
        assert "Drinking bleach cures COVID-19" in candidate.post.text  # the quoted post's text
        assert "Read it all." in candidate.post.text  # a long post's note_tweet.text
        asked = x.calls("eligible")[-1].query
        assert asked["post_selection"] == "feed_size:small,feed_lang:en"
        refs = "referenced_posts" if spelling == "posts" else "referenced_tweets"
        assert f"{refs}.id" in asked["expansions"].split(",")
        [spanish] = (await feed.fetch(None, 5)).candidates  # type: ignore[attr-defined]
        assert spanish.post.platform_id == "902"  # the deployment's languages, in turn
        body = await NotesApi(api).eligible(test_mode=True, limit=5, size="small", lang="en")
        [tweet] = body["data"]
        assert note_leads(tweet) == (
            "https://who.example/bleach",
            "https://fda.example/bleach",
            "https://cdc.example/bleach",
        )
        assert not media_note(tweet) and media_note({"matched_media_notes": [{"id": "1"}]})
        # the suggestions are the candidate's leads, apart from its own links
        assert candidate.post.leads == note_leads(tweet) and candidate.post.links == ()
        await api.close()


async def test_the_suggested_sources_of_an_eligible_post_reach_its_stored_post(
    store: Store,
) -> None:
    async with FakeX() as x:
        x.add_user("200", "alice")
        x.add_tweet(
            "910",
            "200",
            "Drinking bleach cures COVID-19, doctors confirm https://t.co/a",
            urls={"https://t.co/a": "https://blog.example/p"},
            suggested_source_links_with_counts=[
                {"url": "https://www.who.int/bleach", "count": 3},
                {"url": "https://blog.example/p", "count": 9},  # the post's own link
                {"url": "javascript:alert(1)", "count": 4},
                *({"url": f"https://s{n}.org/x", "count": 1} for n in range(6)),
            ],
            note_request_suggestions=[{"text": "CDC: https://www.cdc.gov/bleach."}],
        )
        x.eligible = ["910"]
        s = XSettings(bearer_token="t", api_base=x.api_base, user_id="100", notes_enabled=True)
        api = XApi(s, ApiCosts(store.db))
        [feed] = build_sources(s, api, FakeClock())
        settings = Settings(monitor=MonitorSettings(enabled=True, threshold=0.0))
        scan = monitor_handlers(store, settings, {NOTES_FEED: feed})[SCAN]
        assert isinstance(scan, ScanJobs)
        batch = await feed.fetch(None, 5)  # type: ignore[attr-defined]
        assert await scan.take(batch.candidates) == {"checking": 1}
        await api.close()
    [row] = store.monitor.candidates()
    job = store.jobs.get(row.check_job_id or "")
    assert job is not None and job.post_id is not None
    stored = store.jobs.post(job.post_id)  # what the check job will read
    assert stored is not None and stored.platform_id == "910"
    assert stored.links == ("https://blog.example/p",)
    # most suggested first; the post's own link and what is not a web page left out; five
    assert stored.leads == (
        "https://www.who.int/bleach",
        *(f"https://s{n}.org/x" for n in range(4)),
    )


def test_feed_languages_follow_the_setting_else_the_deployment() -> None:
    s = XSettings(bearer_token="t")
    assert feed_languages(s, ["en", "zh-Hans", "zh-Hant"]) == ("en", "zh")
    assert feed_languages(s, []) == ("en",)
    assert feed_languages(XSettings(bearer_token="t", notes_feed_lang="all"), ["en"]) == ("all",)
