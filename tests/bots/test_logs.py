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


def test_tokens_and_secret_urls_are_masked_in_any_record() -> None:
    import io

    from bots.logs import handler

    out = io.StringIO()
    log = logging.getLogger("discord.http.test")
    log.addHandler(handler(out))
    log.propagate = False
    try:
        url = "https://discord.com/api/v10/interactions/1234/aW50ZXJhY3Rpb24.tok-en/callback"
        log.warning("We are being rate limited. POST %s responded with 429", url)
        log.warning("sent", extra={"headers": "{'Authorization': 'Bearer AAAA%3Dsecret'}"})
        log.warning("GET /slack/oauth_redirect?code=c0de&state=st4te xoxb-123-abc")
        log.warning("hook https://hooks.slack.com/actions/T1/99/s3cr3t")
        log.warning("asked", extra={"event": "at://did:plc:ewvi7nxz/app.bsky.feed.post/3k1"})
        log.warning("GET /xrpc/app.bsky.feed.getPosts?uris=at%3A%2F%2Fdid%3Aplc%3Ahq4bz%2Fa")
    finally:
        log.handlers.clear()
    text = out.getvalue()
    for secret in ("aW50ZXJhY3Rpb24", "AAAA%3Dsecret", "c0de", "st4te", "xoxb-123", "s3cr3t"):
        assert secret not in text
    assert "ewvi7nxz" not in text and "hq4bz" not in text
    assert "/interactions/1234/***/callback" in text and "Bearer ***" in text
    assert "event=at://did:plc:***/app.bsky.feed.post/3k1" in text


def test_leaky_libraries_stay_at_warning_whatever_level_is_asked() -> None:
    from bots.logs import LIBRARY_FLOORS, quiet_libraries

    saved = {n: logging.getLogger(n).level for n in LIBRARY_FLOORS}
    try:
        quiet_libraries("DEBUG")
        assert not logging.getLogger("slack_bolt.RequestVerification").isEnabledFor(logging.INFO)
        assert not logging.getLogger("discord.http").isEnabledFor(logging.DEBUG)
        assert not logging.getLogger("tweepy.client").isEnabledFor(logging.DEBUG)
        assert not logging.getLogger("httpx").isEnabledFor(logging.INFO)
        quiet_libraries("ERROR")
        assert not logging.getLogger("slack_sdk").isEnabledFor(logging.WARNING)
    finally:
        for name, level in saved.items():
            logging.getLogger(name).setLevel(level)
