"""The X client against X's public contract: signatures for any API base, the documented limits
kept by the client and shared by every job and process, both evaluate spellings, both create
answers, one note per post across restarts (issue 52).

Everything runs over loopback against stand-ins: `FakeX` (the contract, its limits enforced),
and for the signature a bare aiohttp server that verifies with oauthlib's own server-side code
from the request as it arrived.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from aiohttp import web
from oauthlib.common import Request as OAuthRequest
from oauthlib.oauth1.rfc5849 import signature as rfc5849

from bots.platforms.x._client import Limits, XApi, XApiError, XRateLimitedError
from bots.platforms.x._community import NotesApi
from bots.platforms.x._notes_jobs import NoteJobs, NoteStatusJobs
from bots.runtime.workers.jobtypes import Job, RetryLaterError
from bots.settings import Settings, XSettings
from storage import Store
from storage.call_limits import Window
from storage.x_notes import ApiCosts, XNote, XNotesRepo
from tests.support.fake_x import FakeX

KEYS = ("ck", "cs", "at", "ats")
NOTE_TEXT = (
    "5G radio waves cannot carry a virus; COVID-19 spreads between people. https://who.example/5g"
)


class Wall:
    """Epoch seconds a test moves by hand; `sleep` moves them as a real wait would."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.now = start
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def x_settings(base: str, **changes: Any) -> XSettings:
    keys = dict(
        zip(
            ("consumer_key", "consumer_secret", "access_token", "access_token_secret"),
            KEYS,
            strict=True,
        )
    )
    return XSettings(**{**keys, "api_base": base, "user_id": "100", **changes})


class Clients:
    """Makes the test's X clients (and note jobs) and closes their sessions at the end."""

    def __init__(self) -> None:
        self.made: list[XApi] = []

    def api(self, store: Store, base: str, wall: Wall | None = None, **keep: Any) -> XApi:
        wall = wall or Wall()
        made = XApi(
            x_settings(base), ApiCosts(store.db), keep=Limits(**keep), wall=wall, sleep=wall.sleep
        )
        self.made.append(made)
        return made

    def jobs(self, store: Store, base: str) -> tuple[NoteJobs, XNotesRepo]:
        settings = Settings(x=x_settings(base, notes_enabled=True))
        repo = XNotesRepo(store.db)
        api = XApi(settings.x, ApiCosts(store.db), keep=Limits(max_wait=0.0))
        self.made.append(api)
        return NoteJobs(settings, store, NotesApi(api), repo), repo


@pytest.fixture
async def clients() -> AsyncIterator[Clients]:
    made = Clients()
    yield made
    for api in made.made:
        await api.close()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "x.db") as opened:
        yield opened


# -- signatures (defect 1) ------------------------------------------------------------------


def oauthlib_verifies(request: web.Request) -> bool:
    """Verify an OAuth 1.0a request with oauthlib's server side, from the request as received:
    its scheme, its Host header, its path and query (RFC 5849 3.4.1.2)."""
    auth = request.headers.get("Authorization", "")
    uri = f"{request.scheme}://{request.headers['Host']}{request.raw_path}"
    received = OAuthRequest(uri, http_method=request.method, headers={"Authorization": auth})
    received.params = rfc5849.collect_parameters(
        uri_query=request.raw_path.partition("?")[2],
        headers={"Authorization": auth},
        exclude_oauth_signature=True,
    )
    given = dict(
        rfc5849.collect_parameters(headers={"Authorization": auth}, exclude_oauth_signature=False)
    )
    received.signature = unquote(given.get("oauth_signature", ""))
    return bool(rfc5849.verify_hmac_sha1(received, KEYS[1], KEYS[3]))


@pytest.mark.parametrize("prefix", ["", "/proxy/x"])
async def test_every_request_is_signed_for_the_url_and_host_it_is_sent_to(
    store: Store, prefix: str
) -> None:
    seen: list[tuple[str, str, bool]] = []

    async def verify(request: web.Request) -> web.Response:
        await request.read()
        ok = oauthlib_verifies(request)
        seen.append((request.method, request.headers["Host"], ok))
        if not ok:
            return web.json_response(
                {"title": "Unauthorized", "detail": "bad oauth_signature"}, status=401
            )
        if request.path.endswith("/users/me"):
            return web.json_response({"data": {"id": "100", "username": "factbot"}})
        return web.json_response({"data": [], "meta": {"result_count": 0}})

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", verify)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        api = XApi(x_settings(f"http://127.0.0.1:{port}{prefix}", user_id=None), ApiCosts(store.db))
        assert await api.me() == "100"  # GET /2/users/me, what the mention bot asks first
        await api.mentions("999")  # a query with commas, colons and dots
        await api.raw("POST", "/2/evaluate_note", json={"note_text": "t", "post_id": "1"})
        await api.close()
    finally:
        await runner.cleanup()
    assert [host for _, host, _ in seen] == [f"127.0.0.1:{port}"] * 3
    assert all(ok for _, _, ok in seen)


async def test_the_stand_in_refuses_a_signature_for_another_host(store: Store) -> None:
    async with FakeX(oauth1=KEYS, prefix="/api") as fake:
        api = XApi(x_settings(fake.api_base, user_id=None), ApiCosts(store.db))
        assert await api.me() == "100"
        assert fake.calls("me")[0].headers["Host"] == f"127.0.0.1:{fake.port}"
        await api.close()


# -- limits shared by jobs and processes (defect 2) -----------------------------------------


async def test_a_429_reset_is_respected_by_another_process(
    tmp_path: Path, open_store: Callable[..., Store]
) -> None:
    async with FakeX(oauth1=KEYS) as fake:
        fake.add_tweet("1000", "200", "5G spreads the virus")
        with open_store(tmp_path / "x.db") as one, open_store(tmp_path / "x.db") as two:
            first = XApi(x_settings(fake.api_base), ApiCosts(one.db))
            fake.script("notes", 429, reset_in=20)
            with pytest.raises(XRateLimitedError):
                await first.raw("POST", "/2/notes", json={"test_mode": True, "post_id": "1000"})
            # another process, the same keys: its evaluate waits for the reset X announced
            second = XApi(x_settings(fake.api_base), ApiCosts(two.db))
            with pytest.raises(XRateLimitedError) as err:
                await second.raw(
                    "POST", "/2/evaluate_note", json={"note_text": NOTE_TEXT, "post_id": "1000"}
                )
            assert 15 <= err.value.retry_after <= 22
            assert fake.calls("evaluate") == []
            await first.close()
            await second.close()


async def test_the_documented_windows_are_kept_and_never_passed(
    store: Store, clients: Clients
) -> None:
    wall = Wall()
    async with FakeX(notes_limit=(3, 900.0), creates_limit=(250, 86400.0), now=wall) as fake:
        fake.add_tweet("1000", "200", "5G spreads the virus")
        notes = NotesApi(
            clients.api(store, fake.api_base, wall, notes=Window("notes", 3, 900.0), max_wait=0.0)
        )
        for _ in range(3):
            await notes.evaluate(NOTE_TEXT, "1000")
        with pytest.raises(XRateLimitedError) as err:  # the fourth waits: nothing is sent
            await notes.eligible(test_mode=True, limit=5, size="small", lang="en")
        assert 899 <= err.value.retry_after <= 901  # X's reset is in whole seconds
        assert len(fake.requests) == 3 and fake.limited == []
        wall.now += 901
        await notes.eligible(test_mode=True, limit=5, size="small", lang="en")
        # a short wait is slept through in place (on the injected clock)
        patient = NotesApi(
            clients.api(
                store, fake.api_base, wall, notes=Window("notes", 3, 900.0), max_wait=1000.0
            )
        )
        for _ in range(3):
            await patient.evaluate(NOTE_TEXT, "1000")
        assert wall.slept and fake.limited == []


async def test_the_daily_notes_limit_is_kept_across_clients(store: Store, clients: Clients) -> None:
    wall = Wall()
    async with FakeX(creates_limit=(2, 86400.0), now=wall) as fake:
        for n in range(3):
            fake.add_tweet(str(1000 + n), "200", "5G spreads the virus")
        creates = Window("notes:create", 2, 86400.0)
        for n in range(2):  # each job its own client: one allowance all the same
            api = clients.api(store, fake.api_base, wall, creates=creates, max_wait=0.0)
            await NotesApi(api).create(note_body(str(1000 + n)))
        with pytest.raises(XRateLimitedError) as err:
            await NotesApi(clients.api(store, fake.api_base, wall, creates=creates)).create(
                note_body("1002")
            )
        assert err.value.retry_after > 86000 and fake.limited == [] and len(fake.notes) == 2


async def test_a_429_is_waited_out_and_then_answered(store: Store, clients: Clients) -> None:
    wall = Wall()
    async with FakeX(now=wall) as fake:
        fake.eligible = []
        fake.script("eligible", 429, reset_in=5)
        notes = NotesApi(clients.api(store, fake.api_base, wall))
        body = await notes.eligible(test_mode=True, limit=5, size="small", lang="en")
        assert body["meta"]["result_count"] == 0
        assert len(fake.calls("eligible")) == 2 and 5 <= sum(wall.slept) <= 7


# -- the contract's variants (defect 3; both create answers) --------------------------------


def note_body(post_id: str) -> dict[str, Any]:
    return {
        "test_mode": True,
        "post_id": post_id,
        "info": {
            "text": NOTE_TEXT,
            "classification": "misinformed_or_potentially_misleading",
            "misleading_tags": ["factual_error"],
            "trustworthy_sources": True,
        },
    }


@pytest.mark.parametrize(
    "paths",
    [("/2/evaluate_note",), ("/2/notes/evaluate",), ("/2/evaluate_note", "/2/notes/evaluate")],
)
async def test_both_evaluate_spellings_and_the_one_that_answers_is_kept(
    store: Store, clients: Clients, paths: tuple[str, ...]
) -> None:
    async with FakeX(evaluate_paths=paths) as fake:
        fake.add_tweet("1000", "200", "5G spreads the virus")
        fake.claim_opinion_score = -0.4  # a score can be negative
        notes = NotesApi(clients.api(store, fake.api_base))
        assert await notes.evaluate(NOTE_TEXT, "1000") == -0.4
        assert await notes.evaluate(NOTE_TEXT, "1000") == -0.4
        assert len(fake.missing) == (0 if "/2/evaluate_note" in paths else 1)  # tried once
        assert [c.path for c in fake.calls("evaluate")][-1] == notes.evaluate_route


@pytest.mark.parametrize("answer", ["note_id", "id"])
async def test_both_create_answers_give_the_note_id(
    store: Store, clients: Clients, answer: str
) -> None:
    async with FakeX(create_answer=answer) as fake:  # type: ignore[arg-type]
        fake.add_tweet("1000", "200", "5G spreads the virus")
        note_id = await NotesApi(clients.api(store, fake.api_base)).create(note_body("1000"))
        assert note_id == fake.notes[0].note_id


async def test_errors_say_what_x_said_in_either_shape(store: Store, clients: Clients) -> None:
    async with FakeX() as fake:
        fake.add_tweet("1000", "200", "5G spreads the virus")
        notes = NotesApi(clients.api(store, fake.api_base))
        fake.script("notes", 403, detail="client-not-enrolled")
        with pytest.raises(Exception, match="Forbidden: client-not-enrolled"):
            await notes.create(note_body("1000"))
        fake.script("notes", 400, detail="text is too long", style="code")
        with pytest.raises(Exception, match=r"text is too long \(code 400\)"):
            await notes.create(note_body("1000"))


def scored(post_id: str) -> XNote:
    return XNote(
        id=f"note-{post_id}", post_id=post_id, check_id="c1", job_id="j1", text=NOTE_TEXT,
        classification="misinformed_or_potentially_misleading", misleading_tags=("factual_error",),
        trustworthy_sources=True, urls=("https://who.example/5g",), url_validity="high",
        claim_opinion="high", harassment_abuse="high", score_detail={}, test_mode=True,
        status="scored", api_note_id=None, claim_opinion_score=None, rating_status=None,
        evaluation={}, error=None, created_at=None, updated_at=None,
    )  # fmt: skip


def note_job(post_id: str, attempts: int = 1) -> Job:
    return Job(
        id=f"job-{post_id}-{attempts}", kind="x:note",
        payload={"post_id": post_id, "check_id": "c1"}, status="running", attempts=attempts,
        max_attempts=5, dedupe_key=None, post_id=None, result_id=None, last_error=None,
        lease_owner="w", lease_expires_at=None, run_after=None, created_at=None,
        started_at=None, finished_at=None,
    )  # fmt: skip


async def test_a_404_evaluate_tries_the_other_spelling_and_submits(
    store: Store, clients: Clients
) -> None:
    async with FakeX(evaluate_paths=("/2/notes/evaluate",)) as fake:
        fake.add_tweet("1000", "200", "5G spreads the virus")
        jobs, repo = clients.jobs(store, fake.api_base)
        repo.add(scored("1000"))
        await jobs.run(note_job("1000"))
        note = repo.for_post("1000")
        assert note is not None and note.status == "submitted", note
        assert note.claim_opinion_score == 0.8 and len(fake.notes) == 1


async def test_an_evaluation_x_could_not_give_is_retried_not_rejected(
    store: Store, clients: Clients
) -> None:
    async with FakeX() as fake:
        fake.add_tweet("1000", "200", "5G spreads the virus")
        jobs, repo = clients.jobs(store, fake.api_base)
        repo.add(scored("1000"))
        fake.script("evaluate", 503)
        with pytest.raises(XApiError):  # the job is retried after the back-off
            await jobs.run(note_job("1000"))
        assert (repo.for_post("1000") or scored("")).status == "scored"
        await jobs.run(note_job("1000", attempts=2))
        assert (repo.for_post("1000") or scored("")).status == "submitted"


async def test_no_evaluate_route_at_all_retries_later(store: Store, clients: Clients) -> None:
    async with FakeX(evaluate_paths=()) as fake:
        fake.add_tweet("1000", "200", "5G spreads the virus")
        jobs, repo = clients.jobs(store, fake.api_base)
        repo.add(scored("1000"))
        with pytest.raises(RetryLaterError):
            await jobs.run(note_job("1000"))
        assert (repo.for_post("1000") or scored("")).status == "scored" and fake.notes == []


async def test_one_note_per_post_across_restarts(
    tmp_path: Path, clients: Clients, open_store: Callable[..., Store]
) -> None:
    async with FakeX() as fake:
        fake.add_tweet("1000", "200", "5G spreads the virus")
        fake.add_tweet("1001", "200", "Bleach cures COVID-19")
        with open_store(tmp_path / "x.db") as one:
            jobs, repo = clients.jobs(one, fake.api_base)
            repo.add(scored("1000"))
            await jobs.run(note_job("1000"))
            # the worker dies after X took the note on 1001, before it was recorded
            repo.add(scored("1001"))
            await NotesApi(jobs.notes.api).create(note_body("1001"))
        with open_store(tmp_path / "x.db") as two:  # a new process on the same database
            jobs, repo = clients.jobs(two, fake.api_base)
            await jobs.run(note_job("1000", attempts=2))
            await jobs.run(note_job("1001", attempts=2))
            assert (repo.for_post("1001") or scored("")).status == "submitted"
        assert sorted(n.post_id for n in fake.notes) == ["1000", "1001"]
        assert len(fake.calls("notes")) == 2  # never a second note on a post


async def test_notes_written_is_read_with_its_fields(store: Store, clients: Clients) -> None:
    async with FakeX() as fake:
        fake.add_tweet("1000", "200", "5G spreads the virus")
        jobs, repo = clients.jobs(store, fake.api_base)
        repo.add(scored("1000"))
        await jobs.run(note_job("1000"))
        fake.set_note_status("1000", "currently_rated_helpful", ClaimOpinion="high")
        status = NoteStatusJobs(jobs.settings, jobs.notes, repo)
        await status.run(replace(note_job("s"), kind="x:notes-status"))
        note = repo.for_post("1000")
        assert note is not None and note.rating_status == "helpful"
        assert note.evaluation == {"ClaimOpinion": "high"}
        assert fake.calls("written")[-1].query["note.fields"] == "id,info,status,test_result"


def test_the_status_refresh_minimum_is_stated() -> None:
    field = XSettings.model_fields["notes_status_seconds"]
    assert "300" in (field.description or "")
