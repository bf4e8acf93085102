"""The X sender and renderer against the stand-in: threads within 280, resumed, reconciled."""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from bots.platforms.x._client import XApi, XRateLimitedError
from bots.platforms.x._mentions import MentionPoller
from bots.platforms.x._sender import (
    XReplyNotAllowedError,
    XReplyRateLimitedError,
    XSender,
    thread_key,
)
from bots.runtime.delivery.replies import ReplyKey, send_once
from bots.runtime.platform.contract import Answer, Destination
from bots.settings import XSettings
from pipeline.records.domain import Correction, CorrectionItem, Label, Reference
from pipeline.reply.thread import x_weighted
from storage import Store
from storage.x_notes import ApiCosts
from tests.support.fake_x import FakeX

URL_RE = re.compile(r"https?://\S+")


def correction(claims: int = 3) -> Correction:
    refs = tuple(
        Reference(n, f"d{n}", f"https://news{n}.example/{'long-path-' * 6}{n}", f"Story {n}")
        for n in range(1, 4)
    )
    items = tuple(
        CorrectionItem(
            n,
            f"Claim number {n} about 5G towers",
            Label.FALSE,
            f"Health agencies found no link between radio signals and infections (claim {n}).",
            references=(1, 2),
        )
        for n in range(1, claims + 1)
    )
    return Correction(Label.FALSE, "This post is false.", items, references=refs)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "x.db") as opened:
        yield opened


@pytest.fixture
async def fake() -> AsyncIterator[FakeX]:
    async with FakeX() as x:
        x.add_user("200", "alice")
        x.add_tweet("1000", "200", "5G towers spread viruses")
        x.add_tweet("1001", "300", "@factbot true?", replied_to="1000")
        yield x


def settings(fake: FakeX, **changes: object) -> XSettings:
    base: dict[str, object] = {
        "bearer_token": "user-token",
        "api_base": fake.api_base,
        "user_id": "100",
    }
    base.update(changes)
    return XSettings(**base)  # type: ignore[arg-type]


class Wall:
    """Epoch seconds that a test moves forward (the machine's, plus what it skipped)."""

    def __init__(self) -> None:
        self.skipped = 0.0

    def __call__(self) -> float:
        return time.time() + self.skipped


def sender_for(fake: FakeX, store: Store, wall: Wall | None = None, **changes: object) -> XSender:
    s = settings(fake, **changes)
    api = XApi(s, ApiCosts(store.db), wall=wall or time.time)
    return XSender(s, api, store.state)


DEST = Destination(
    "x",
    "",
    "1000",
    message_id="1001",
    thread_id="1000",
    public={"reply_key": "factbot:x:1001:answer"},
)


async def test_a_correction_renders_as_a_numbered_thread_within_280(
    fake: FakeX, store: Store
) -> None:
    sender = sender_for(fake, store, max_posts=4, max_links=2)
    rendered = sender.render(Answer("correction", correction=correction()), DEST)
    parts = rendered.payload["parts"]
    assert 1 < len(parts) <= 4 and tuple(parts) == rendered.texts
    assert all(x_weighted(p) <= 280 for p in parts)
    assert all(p.endswith(f"({n}/{len(parts)})") for n, p in enumerate(parts, 1))
    urls = [u for p in parts for u in URL_RE.findall(p)]
    assert 1 <= len(urls) <= 2  # links per reply is a setting
    await sender.close()


async def test_a_failure_is_one_short_post_and_a_long_written_text_a_thread(
    fake: FakeX, store: Store
) -> None:
    sender = sender_for(fake, store)
    [part] = sender.render(Answer("failure", message="factbot could not check this."), DEST).texts
    assert part == "factbot could not check this."
    long = "factbot could not check this " * 30  # e.g. a reviewer's long edited reply
    parts = sender.render(Answer("notice", message=long), DEST).payload["parts"]
    assert len(parts) > 1 and all(x_weighted(p) <= 280 for p in parts)
    words = " ".join(p.rsplit(" (", 1)[0] for p in parts).split()
    assert words == long.split()  # nothing cut, nothing lost
    await sender.close()


async def test_each_part_replies_to_the_previous_and_is_billed(fake: FakeX, store: Store) -> None:
    sender = sender_for(fake, store, post_chars=140, max_posts=9)
    rendered = sender.render(Answer("correction", correction=correction(2)), DEST)
    first = await sender.send(DEST, rendered)
    posts = fake.created()
    assert first == posts[0]["_created"] and len(posts) == len(rendered.texts)
    parents = [p["reply"]["in_reply_to_tweet_id"] for p in posts]
    assert parents == ["1001", *[p["_created"] for p in posts[:-1]]]
    assert fake.calls("create")[0].headers["Authorization"] == "Bearer user-token"
    costs = ApiCosts(store.db).totals("x")
    with_url = sum(1 for p in posts if URL_RE.search(p["text"]))
    assert costs.get("post_url", (0, 0.0)) == (with_url, pytest.approx(0.20 * with_url))
    assert costs.get("post", (0, 0.0))[0] == len(posts) - with_url
    # sending again (a retried job) posts nothing more
    assert await sender.send(DEST, rendered) == first
    assert len(fake.created()) == len(posts)
    await sender.close()


async def test_a_429_mid_thread_resumes_after_the_last_posted_part(
    fake: FakeX, store: Store
) -> None:
    wall = Wall()
    sender = sender_for(fake, store, wall, post_chars=140, max_posts=9)
    rendered = sender.render(Answer("correction", correction=correction(2)), DEST)
    assert len(rendered.texts) >= 3
    fake.script("create", 429, reset_in=30, after=1)  # the second part is rate limited
    with pytest.raises(XReplyRateLimitedError) as err:
        await sender.send(DEST, rendered)
    assert 25 <= err.value.retry_after <= 32  # from x-rate-limit-reset
    assert len(fake.created()) == 1
    calls = len(fake.calls("create"))
    with pytest.raises(XReplyRateLimitedError):  # a job retried early waits for the reset
        await sender_for(fake, store, wall, post_chars=140, max_posts=9).send(DEST, rendered)
    assert len(fake.calls("create")) == calls  # nothing was sent before the reset
    wall.skipped = 32.0
    await sender.send(DEST, rendered)  # the retried job, once the window reset
    posts = fake.created()
    assert [p["text"] for p in posts] == list(rendered.texts)
    assert posts[1]["reply"]["in_reply_to_tweet_id"] == posts[0]["_created"]
    await sender.close()


async def test_a_403_is_permanent_and_posts_nothing(fake: FakeX, store: Store) -> None:
    sender = sender_for(fake, store)
    rendered = sender.render(Answer("failure", message="factbot could not check this."), DEST)
    other = Destination("x", "", "1000", message_id="1000", public={"reply_key": "k2"})
    with pytest.raises(XReplyNotAllowedError, match="reply not allowed by X"):
        await sender.send(other, rendered)  # under Alice's post, which did not mention factbot
    assert fake.created() == []
    await sender.close()


async def test_a_crash_mid_thread_is_settled_with_what_x_has(fake: FakeX, store: Store) -> None:
    sender = sender_for(fake, store, post_chars=140, max_posts=9)
    rendered = sender.render(Answer("correction", correction=correction(2)), DEST)
    parts = list(rendered.texts)
    assert len(parts) >= 2
    # the worker reserved the reply, stored the thread, posted part 1 and died before recording
    store.state.set(thread_key(DEST), json.dumps({"parts": parts, "posted": []}))
    on_x = URL_RE.sub("https://t.co/abc", parts[0])  # X shows every link as t.co
    fake.add_tweet("1500", "100", on_x, replied_to="1001")
    key = ReplyKey("x", "1001", "answer")
    store.replies.reserve("x", "1001", "answer", job_id="job-1")

    async def send() -> str | None:
        return await sender.send(DEST, rendered)

    async def reconcile() -> str | None:
        return await sender.find_sent(DEST)

    reply = await send_once(store, key, send, job_id="job-1", reconcile=reconcile)
    assert reply is not None and reply.status == "sent" and reply.platform_reply_id == "1500"
    posts = fake.created()
    assert [p["text"] for p in posts] == parts[1:]  # part 1 was not posted again
    assert posts[0]["reply"]["in_reply_to_tweet_id"] == "1500"
    assert await sender.find_sent(DEST) == "1500"
    await sender.close()


async def test_oauth1_requests_are_signed_for_the_api_base_they_go_to(store: Store) -> None:
    keys = ("ck", "c/s+ecret", "at", "t&s")
    async with FakeX(oauth1=keys) as fake:  # checks each signature against its own URL
        fake.add_tweet("1000", "200", "5G towers spread viruses")
        fake.add_tweet("1001", "300", "@factbot true?", replied_to="1000")
        s = XSettings(
            consumer_key=keys[0],
            consumer_secret=keys[1],
            access_token=keys[2],
            access_token_secret=keys[3],
            api_base=fake.api_base,  # not api.twitter.com, which tweepy signs for
        )
        api = XApi(s, ApiCosts(store.db))
        assert await api.me() == "100"
        mentions = await api.mentions("999")  # a query with commas, colons and dots
        assert [t["id"] for t in mentions["data"]] == ["1001"]
        reply = await api.post("Not so: https://a.example/x?y=1", in_reply_to="1001")  # JSON body
        assert fake.tweets[reply]["text"].startswith("Not so")
        await api.raw("GET", "/2/notes/search/notes_written", params={"test_mode": "true"})
        assert all(c.headers["Authorization"].startswith("OAuth ") for c in fake.requests)
        await api.close()


async def test_a_malformed_mention_is_skipped_and_the_others_go_on(
    fake: FakeX, store: Store
) -> None:
    class Service:
        def __init__(self) -> None:
            self.requests: list[object] = []

        async def intake(self, request: object) -> object:
            self.requests.append(request)
            return type("Intake", (), {"status": "accepted", "reason": ""})()

    fake.add_tweet("1002", "300", "@factbot and this one?", replied_to="1000")
    del fake.tweets["1002"]["author_id"]  # a payload without its author
    s = settings(fake)
    service = Service()
    poller = MentionPoller(s, XApi(s, ApiCosts(store.db)), service, store.state)
    result = await poller.poll_once()
    assert (result.accepted, result.malformed, result.since_id) == (1, 1, "1002")
    fake.script("mentions", 429, reset_in=120)
    with pytest.raises(XRateLimitedError) as err:
        await poller.poll_once()
    assert 110 <= err.value.retry_after <= 122
    await poller.api.close()
