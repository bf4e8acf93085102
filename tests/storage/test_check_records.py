"""What the dashboard's check page reads about a check, through repositories (both engines)."""

from __future__ import annotations

from storage import Store


def _request(request_id: str, event_key: str, check_id: str, at: str) -> dict[str, object]:
    return {
        "id": request_id,
        "platform": "slack",
        "event_key": event_key,
        "workspace_id": "T1",
        "channel_id": "C1",
        "requester": "u-pseudonym",
        "author": None,
        "message_id": None,
        "post_id": None,
        "check_id": check_id,
        "check_job_id": None,
        "reply_job_id": None,
        "created_at": at,
    }


def test_a_checks_requests_come_oldest_first_and_no_others(store: Store) -> None:
    store.platform.add(_request("r2", "T1:Ev2", "c1", "2026-12-01T00:00:02+00:00"))
    store.platform.add(_request("r1", "T1:Ev1", "c1", "2026-12-01T00:00:01+00:00"))
    store.platform.add(_request("r3", "T1:Ev3", "c2", "2026-12-01T00:00:03+00:00"))
    assert [r.id for r in store.platform.for_check("c1")] == ["r1", "r2"]
    assert store.platform.for_check("c9") == []


def test_a_checks_replies_are_those_that_carried_it(store: Store) -> None:
    first = store.replies.reserve("slack", "C1:1", "correction", check_id="c1")
    store.replies.reserve("slack", "C1:2", "correction", check_id="c2")
    assert first is not None
    store.replies.mark_sent(first.id, platform_reply_id="1700000000.1")
    [reply] = store.replies.for_check("c1")
    assert (reply.target_id, reply.status, reply.platform_reply_id) == (
        "C1:1",
        "sent",
        "1700000000.1",
    )


def test_the_notes_a_request_left_are_read_from_its_check_job(store: Store) -> None:
    store.jobs.enqueue("check", {"check_id": "c1", "notes": ["image 2 is over 10 MB"]})
    store.jobs.enqueue("reply:slack", {"check_id": "c1", "notes": ["not these"]})
    store.jobs.enqueue("check", {"check_id": "c2"})
    assert store.jobs.check_notes("c1") == ["image 2 is over 10 MB"]
    assert store.jobs.check_notes("c2") == []
    assert store.jobs.check_notes("c9") == []
