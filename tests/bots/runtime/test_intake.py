"""The one intake call, `CheckRequests.submit`, over a real store on both engines.

Each way in (platform, monitor, API, dashboard) has its own tests beside its code; here is what
they all rely on: the request's kind is stored with its post, a replayed key stores nothing,
`admit` and `record` share the write transaction with the jobs, and the worker tells a page
request from a post by its kind, not by its shape.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from bots.runtime.checking.requests import CheckRequests, FollowUp, Requested, RequestToCheck
from bots.runtime.checking.reuse import ReuseHit
from pipeline.errors import InputError
from pipeline.inputs.posts import page_request, post_from_text, requested_page
from pipeline.records.domain import Post, new_id
from storage import Store
from storage.migrations import BACKFILL_KINDS

URL = "https://news.example/story"


@pytest.fixture
def store(tmp_path: Path, open_store: Callable[..., Store]) -> Store:
    return open_store(tmp_path / "intake.db")


def _kind_of(store: Store, requested: Requested) -> str:
    assert requested.check_job is not None and requested.check_job.post_id is not None
    row = store.db.execute(
        "SELECT kind FROM posts WHERE id = ?", [requested.check_job.post_id]
    ).fetchone()
    return str(row[0])


def _count(store: Store, table: str) -> int:
    return int(store.db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def test_each_kind_of_request_is_stored_with_its_post_and_read_back(store: Store) -> None:
    requests = CheckRequests(store)
    posts = {
        "text": post_from_text("The moon is made of cheese.", max_chars=500, platform="api"),
        "image": post_from_text("", max_chars=500, platform="api", image_refs=[URL + ".png"]),
        "page": page_request(URL),
        "post": Post(id=new_id(), platform="slack", platform_id="T1:C1:1", text="A post."),
    }
    for kind, post in posts.items():
        request = RequestToCheck(post, origin="api")
        assert request.kind == kind
        requested = asyncio.run(requests.submit(request))
        assert requested.created and _kind_of(store, requested) == kind
        assert requested.check_job is not None and requested.check_job.post_id is not None
        stored = store.jobs.post(requested.check_job.post_id)
        assert stored is not None and stored.kind == kind  # what the worker reads


def test_a_replayed_key_stores_nothing_and_names_the_first_job(store: Store) -> None:
    requests = CheckRequests(store)
    post = post_from_text("Vaccines contain microchips.", max_chars=500, platform="api")

    async def twice() -> list[Requested]:
        again = dataclasses.replace(post, id=new_id(), platform_id=new_id())
        return list(
            await asyncio.gather(
                requests.submit(RequestToCheck(post, origin="api", key="k1")),
                requests.submit(RequestToCheck(again, origin="api", key="k1")),
            )
        )

    first, second = asyncio.run(twice())
    assert sorted([first.created, second.created]) == [False, True]
    assert first.check_job is not None and second.check_job is not None
    assert first.check_job.id == second.check_job.id
    assert first.check_id == second.check_id
    assert _count(store, "jobs") == 1 and _count(store, "posts") == 1


def test_admit_refuses_inside_the_transaction_and_stores_nothing(store: Store) -> None:
    requests = CheckRequests(store)
    seen: list[ReuseHit | None] = []

    def admit(hit: ReuseHit | None) -> str | None:
        seen.append(hit)
        return "over budget"

    follow = FollowUp("reply:chat", {}, dedupe_key="reply:chat:e1", max_attempts=5)
    post = Post(id=new_id(), platform="chat", platform_id="m1", text="A claim.")
    requested = asyncio.run(
        requests.submit(RequestToCheck(post, origin="chat", key="e1", follow=follow), admit=admit)
    )
    assert requested.refused == "over budget" and not requested.created
    assert seen == [None] and _count(store, "jobs") == 0 and _count(store, "posts") == 0


def test_a_failing_record_takes_the_jobs_back_with_it(store: Store) -> None:
    requests = CheckRequests(store)
    recorded: list[Requested] = []

    def record(requested: Requested) -> None:
        recorded.append(requested)
        raise RuntimeError("the platform row could not be written")

    follow = FollowUp("reply:chat", {"x": 1}, dedupe_key="reply:chat:e2", max_attempts=5)
    post = Post(id=new_id(), platform="chat", platform_id="m2", text="A claim.")
    request = RequestToCheck(post, origin="chat", key="e2", follow=follow)
    with pytest.raises(RuntimeError, match="platform row"):
        asyncio.run(requests.submit(request, record=record))
    assert len(recorded) == 1  # record ran after the jobs were written ...
    assert _count(store, "jobs") == 0 and _count(store, "posts") == 0  # ... in one transaction
    requested = asyncio.run(requests.submit(request, record=recorded.append))
    assert requested.created and requested.follow_job is not None
    assert requested.check_job is not None
    assert requested.follow_job.waits_for == requested.check_job.id
    assert requested.follow_job.payload["check_id"] == requested.check_id
    assert recorded[-1] == requested and _count(store, "jobs") == 2


def test_a_request_needs_an_origin_and_a_post_a_known_kind() -> None:
    post = Post(id="p", platform="api", platform_id="p", text="t")
    with pytest.raises(ValueError, match="origin"):
        RequestToCheck(post, origin="")
    with pytest.raises(ValueError, match="blank"):
        RequestToCheck(post, origin="api", key="  ")
    with pytest.raises(ValueError, match="unknown post kind 'video'; the kinds are"):
        Post(id="p", platform="api", platform_id="p", text="t", kind="video")  # type: ignore[arg-type]


def test_a_page_is_told_by_its_kind_not_by_its_shape() -> None:
    page = page_request(URL)
    assert page.kind == "page" and requested_page(page) == URL
    # The old pattern (platform "web", text = url = the only link) is no longer read as a page.
    shaped = dataclasses.replace(page, kind="text")
    assert requested_page(shaped) is None
    typed = post_from_text(URL, max_chars=500, platform="web")
    assert typed.kind == "text" and requested_page(typed) is None
    with pytest.raises(InputError, match="names no URL"):
        requested_page(dataclasses.replace(page, url=None))


def test_older_posts_get_their_kinds_from_the_backfill(store: Store) -> None:
    legacy = {
        "page": Post(id="a", platform="web", platform_id="a", text=URL, url=URL, links=(URL,)),
        "text": Post(id="b", platform="api", platform_id="b", text="Typed words."),
        "image": Post(id="c", platform="web", platform_id="c", text="", image_refs=("x",)),
        "post": Post(id="d", platform="slack", platform_id="d", text=URL, url=URL, links=(URL,)),
    }
    for post in legacy.values():  # stored as code before kinds stored them: all 'post'
        store.jobs.enqueue("check", {}, post=dataclasses.replace(post, kind="post"))
    for statement in BACKFILL_KINDS:
        store.db.execute(statement)
    rows = dict(store.db.execute("SELECT id, kind FROM posts").fetchall())
    assert rows == {post.id: kind for kind, post in legacy.items()}
