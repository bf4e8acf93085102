"""Log output: one line per record, with the structured `extra` fields the stages attach.

The stages log events with fields (`log.warning("invalid model output", extra={"stage": ...,
"reason": ...})`); the standard formatter drops those fields, so an operator would see the event
without its reason. `KeyValueFormatter` appends them as `key=value` (values repr-quoted when they
hold spaces), which reads well in a terminal and greps well in a journal.

What the libraries log. factbot runs under loggers it does not write, and several of them put
tokens, message text or raw platform ids into their records below WARNING (audited for
issue 29, at DEBUG, INFO and WARNING, with the pinned versions):

- `slack_bolt`: INFO, the whole body of a request whose signature it rejects (a late but real
  message: its text and raw user ids) and of every request when a listener lists `body`;
  DEBUG, each response body. It logs through the logger factbot hands it, so factbot hands it
  `slack_bolt.factbot`, not its own.
- `slack_sdk`: DEBUG, each Web API request's parameters and JSON (the reply text, channel and
  user ids; the Authorization header is redacted by the library), each response body (messages
  read with `conversations.replies`), a `response_url` (a bearer secret) with its body, and
  every Socket Mode envelope (events with text and user ids); INFO, the API URL of a retry.
- `discord` (discord.py): DEBUG, `discord.http` logs each route with its request body and
  response (interaction callback and webhook URLs carry the interaction token) and
  `discord.gateway` every gateway event (message text, user ids); WARNING, a rate-limited
  route's URL (the interaction token again).
- `tweepy`: DEBUG, each request's headers — the bearer token or the OAuth 1.0a signature —
  parameters and JSON (the reply text).
- `oauthlib` (signing tweepy's OAuth 1.0a requests): DEBUG, each request's parameters with
  `oauth_consumer_key` and `oauth_token` (the access token), the signature base string and
  the signature; `requests_oauthlib` likewise, with the signed headers.
- `httpx` (atproto, the fetcher, the LLM client): INFO, every request's URL — Bluesky's
  `getPosts?uris=at://did:plc:…` (raw ids) and any query-string token; `httpcore`: DEBUG,
  connection events (no content).
- `urllib3` (requests, under Mastodon.py): DEBUG, each request line with its query string
  (`since_id`, account ids). Mastodon.py itself and atproto log nothing of their own.
- `uvicorn.access`: INFO, each request's path with its query string (Slack's OAuth redirect
  carries `code` and `state`); `uvicorn.error`: no content.
- `apscheduler`: INFO, job names and run times (factbot's job names hold no content).
- `aiohttp`, `websockets`: DEBUG, connection events (no content).
- factbot's own records: a Bluesky event key (logged with each request and reply) is the
  mention's `at://did:plc:…/…` URI, which holds the asker's DID.

So `configure` holds the loggers that leak below WARNING at WARNING whatever level the operator
sets (`LIBRARY_FLOORS`), and a filter on the handler redacts what a WARNING or ERROR of any
logger could still carry: Slack and bearer tokens, JWTs, the token in Discord interaction and
webhook URLs, Slack response URLs, Bluesky DIDs, and secret query-string values
(`REDACTIONS`). uvicorn's own log set-up is bypassed (`UVICORN_LOG_CONFIG`) so its records
reach that handler.
"""

from __future__ import annotations

import logging
import re
from typing import IO

# every attribute a LogRecord has before `extra` adds its own
_STANDARD = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime", "taskName"}
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def _value(value: object) -> str:
    text = str(value)
    return repr(text) if not text or any(c.isspace() or c in "='\"" for c in text) else text


class KeyValueFormatter(logging.Formatter):
    """Format a record as usual, then its extra fields as key=value pairs."""

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        extras = {k: v for k, v in vars(record).items() if k not in _STANDARD}
        if not extras:
            return line
        fields = " ".join(f"{k}={_value(v)}" for k, v in extras.items())
        head, sep, rest = line.partition("\n")  # keep a traceback below the fields
        return f"{head} {fields}{sep}{rest}"


# Loggers that put tokens, message text or raw ids in records below this level (see above).
LIBRARY_FLOORS = {
    "slack_bolt": logging.WARNING,
    "slack_sdk": logging.WARNING,
    "discord": logging.WARNING,
    "tweepy": logging.WARNING,
    "oauthlib": logging.WARNING,
    "requests_oauthlib": logging.WARNING,
    "httpx": logging.WARNING,
    "httpcore": logging.WARNING,
    "urllib3": logging.WARNING,
    "hpack": logging.WARNING,
}
# `uvicorn.run(log_config=UVICORN_LOG_CONFIG)`: uvicorn then installs no handler of its own and
# its records (the access log) go through the redacting handler below.
UVICORN_LOG_CONFIG = None
_MASK = "***"
REDACTIONS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bxox[a-z]-[\w-]+|\bxapp-[\w-]+"), _MASK),  # Slack tokens
    (re.compile(r"\bBearer\s+[^\s'\",}]+"), f"Bearer {_MASK}"),
    (re.compile(r"(Authorization['\"]?\s*[:=]\s*['\"]?\w+\s+)[^'\",}]+"), rf"\1{_MASK}"),
    (re.compile(r"\beyJ[\w-]+\.[\w-]+\.[\w-]*"), _MASK),  # JWTs (Bluesky sessions)
    (re.compile(r"(/(?:webhooks|interactions)/\d+/)[\w.-]+"), rf"\1{_MASK}"),  # Discord tokens
    (re.compile(r"(https://hooks\.slack\.com/)[^\s'\"]+"), rf"\1{_MASK}"),  # response URLs
    # Bluesky DIDs: a raw account id, inside every at:// URI (the event keys factbot logs)
    # (also percent-encoded, as in a getPosts URL)
    (re.compile(r"did(:|%3A)(plc|web)\1[\w.-]+(?:\1[\w.-]+)*", re.I), rf"did\1\2\1{_MASK}"),
    (
        re.compile(
            r"([?&](?:code|state|token|access_token|refresh_token|password|app_password|"
            r"client_secret|secret|key|api_key|ticket|signature)=)[^&\s'\"]+",
            re.IGNORECASE,
        ),
        rf"\1{_MASK}",
    ),
)


def redact(text: str) -> str:
    """Return text with the tokens and secrets `REDACTIONS` knows masked."""
    for pattern, replacement in REDACTIONS:
        text = pattern.sub(replacement, text)
    return text


class RedactingFilter(logging.Filter):
    """Mask tokens and secrets in a record's message and fields before any handler writes it."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = redact(message)
        if masked != message:
            record.msg, record.args = masked, ()
        for key, value in vars(record).items():
            if key not in _STANDARD and isinstance(value, str):
                setattr(record, key, redact(value))
        if record.exc_info and not record.exc_text:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        return True


def handler(stream: IO[str] | None = None) -> logging.Handler:
    """Return the handler factbot logs through: one line per record, fields, secrets masked."""
    out = logging.StreamHandler(stream)
    out.setFormatter(KeyValueFormatter(FORMAT))
    out.addFilter(RedactingFilter())
    return out


def quiet_libraries(level: str | int) -> None:
    """Hold the libraries that leak below WARNING at WARNING, whatever level is asked."""
    asked = logging.getLevelName(level) if isinstance(level, str) else level
    for name, floor in LIBRARY_FLOORS.items():
        logging.getLogger(name).setLevel(max(int(asked), floor))


def configure(level: str) -> None:
    """Send records at level and above to stderr, one line each with their fields."""
    quiet_libraries(level)
    logging.basicConfig(level=level, handlers=[handler()])
