"""Posting answers to Mastodon (worker processes): a reply thread under the mention.

The first status replies to the mention (`in_reply_to_id`), each further one to the status
before, all with the visibility the destination (or a private answer) says. Every status is
posted with an `Idempotency-Key`: the reply key for the first, the key plus its number for the
others, so a retry of a status whose answer was lost returns the status already made instead
of posting it again (Mastodon keeps the keys for an hour). The thread's progress is kept in
`store.state` (`mastodon:reply:<key>`), so a retried send goes on after the last status made.

`find_sent` reports a thread already whole; a partial one returns None, and the send goes on
from the last status recorded, re-sending the next with its own idempotency key.

Failure policy: nothing posted yet and the instance refused (4xx: 422 too long, 404 deleted,
403, 429) → `ReplyRejectedError`; a 422 about the length re-reads the instance's limits first,
so the next render fits. Anything after a status was posted, a 5xx or a lost connection leaves
the reply pending.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from mastodon.errors import MastodonAPIError, MastodonNetworkError

from bots.platforms.mastodon import _render
from bots.platforms.mastodon._api import MastodonApi, RateLimitedError, status_code
from bots.runtime.delivery.replies import ReplyRejectedError
from bots.runtime.platform.contract import Answer, Destination, Rendered
from bots.settings import MastodonSettings
from storage.state import StateRepo

log = logging.getLogger(__name__)


class ThreadPartlyPostedError(RuntimeError):
    """Some statuses of a reply thread are up and the next failed: the reply stays pending."""


def reply_key(destination: Destination) -> str:
    """Return the key naming this reply (the runtime's reply key, else the event's)."""
    public = destination.public
    return public.get("reply_key") or public.get("event_key") or destination.message_id or ""


class MastodonSender:
    """Render answers as Mastodon reply threads and post them once."""

    platform = "mastodon"

    def __init__(self, settings: MastodonSettings, api: MastodonApi, state: StateRepo) -> None:
        self.settings = settings
        self.api = api
        self.state = state

    def render(self, answer: Answer, destination: Destination) -> Rendered:
        """Return the statuses of answer within the instance's limit."""
        limits = self.api.limits()
        return _render.render(
            answer,
            destination,
            max_characters=limits.max_characters,
            url_characters=limits.url_characters,
            max_posts=self.settings.max_posts,
        )

    def _load(self, key: str) -> dict[str, Any] | None:
        raw = self.state.get(f"mastodon:reply:{key}")
        return None if raw is None else dict(json.loads(raw))

    def _save(self, key: str, progress: dict[str, Any]) -> None:
        self.state.set(f"mastodon:reply:{key}", json.dumps(progress))

    async def send(self, destination: Destination, rendered: Rendered) -> str | None:
        """Post the thread (continuing one partly posted); return the first status's id."""
        key = reply_key(destination)
        payload = rendered.payload
        statuses = list(payload["statuses"])
        # Only the count and the ids: the texts quote the post checked (deleted after retention).
        progress = self._load(key) or {"count": 0, "visibility": "", "posted": []}
        if not progress["posted"]:
            progress.update(count=len(statuses), visibility=payload["visibility"])
        self._save(key, progress)
        for index in range(len(progress["posted"]), len(statuses)):
            posted = progress["posted"]
            parent = posted[-1] if posted else destination.public["in_reply_to_id"]
            idempotency = key if index == 0 else f"{key}:{index + 1}"
            try:
                status = await self.api.call(
                    self.api.client.status_post,
                    statuses[index],
                    in_reply_to_id=parent,
                    visibility=progress["visibility"],
                    idempotency_key=idempotency,
                    # the reply's language (ISO 639-1), so readers' language filters work
                    language=payload.get("language", "en"),
                )
            except (RateLimitedError, MastodonAPIError, MastodonNetworkError) as exc:
                await self._failed(exc, posted, index, len(statuses))
                raise
            posted.append(str(status["id"]))
            self._save(key, progress)
        log.info("Mastodon reply posted", extra={"key": key, "statuses": len(progress["posted"])})
        return str(progress["posted"][0])

    async def _failed(self, exc: Exception, posted: list[str], index: int, total: int) -> None:
        if posted:
            raise ThreadPartlyPostedError(f"status {index + 1} of {total} failed: {exc}") from exc
        code = status_code(exc)
        if isinstance(exc, RateLimitedError) or (code is not None and 400 <= code < 500):
            if code == 422 and "character limit" in str(exc).lower():
                await self.api.read_limits()  # the next render fits the instance's real limit
            raise ReplyRejectedError(f"Mastodon refused the reply: {exc}") from exc

    async def find_sent(self, destination: Destination) -> str | None:
        """Return the first status's id when the whole thread is recorded as posted, else None."""
        progress = self._load(reply_key(destination))
        if progress is None or len(progress["posted"]) < progress["count"]:
            return None  # the send goes on; each status's idempotency key stops a repeat
        return str(progress["posted"][0])
