"""Log lines carry the fields the stages attach."""

from __future__ import annotations

import logging

from bots.logs import KeyValueFormatter


def _record(**extra: object) -> logging.LogRecord:
    return logging.makeLogRecord(
        {"name": "t", "levelno": logging.WARNING, "levelname": "WARNING", "msg": "event", **extra}
    )


def test_extra_fields_follow_the_message() -> None:
    line = KeyValueFormatter("%(levelname)s %(message)s").format(
        _record(stage="judge", reason="not valid JSON", calls=2, empty="")
    )
    assert line == "WARNING event stage=judge reason='not valid JSON' calls=2 empty=''"


def test_a_plain_record_is_unchanged_and_a_traceback_stays_below() -> None:
    formatter = KeyValueFormatter("%(message)s")
    assert formatter.format(_record()) == "event"
    try:
        raise ValueError("boom")
    except ValueError:
        import sys

        record = _record(stage="claims", exc_info=sys.exc_info())
    first, *rest = formatter.format(record).splitlines()
    assert first == "event stage=claims"
    assert rest[-1] == "ValueError: boom"
