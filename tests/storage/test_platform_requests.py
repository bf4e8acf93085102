"""Platform requests: one a platform event, whatever redeliveries (both engines)."""

from __future__ import annotations

from storage import Store


def _row(request_id: str) -> dict[str, object]:
    return {
        "id": request_id,
        "platform": "slack",
        "event_key": "T1:Ev1",
        "workspace_id": "T1",
        "channel_id": "C1",
        "requester": "u-pseudonym",
        "author": None,
        "message_id": "1700000100.000200",
        "post_id": None,
        "check_id": "c1",
        "check_job_id": None,
        "reply_job_id": None,
        "created_at": "2026-12-01T00:00:00+00:00",
    }


def test_an_event_is_stored_once_and_found_by_its_key(store: Store) -> None:
    assert store.platform.add(_row("r1"))
    assert not store.platform.add(_row("r2"))  # a redelivery of the same event
    found = store.platform.find("slack", "T1:Ev1")
    assert found is not None and found.id == "r1" and found.check_id == "c1"
