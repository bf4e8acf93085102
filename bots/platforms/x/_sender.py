"""Posting a reply thread on X exactly once per post, resumable after any failure.

A reply of several posts is several platform calls; the reply ledger (`send_once`) guards the
whole reply, and this sender guards each post. Before the first post, the thread's texts are
stored under the reply key (`store.state`, ``x:thread:<reply key>``); after each post its id is
appended there at once. A retried attempt (a 429 between posts, a worker that died) therefore
posts only what is missing, each part replying to the previous one, with the texts of the first
attempt. `find_sent` settles a reply left pending by a crash: it looks among the bot's own posts
for the part that may have been posted unrecorded (a reply to the previous part with that
text), records it, and answers the first post's id once every part is on X.

X's answers: a 429 raises `XReplyRateLimitedError` (nothing was posted by that call; the job is
retried when the rate-limit window resets), a 403 raises `XReplyNotAllowedError` (X does not
allow the reply under that post: the job ends dead, the ledger row says why, nothing retries).
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from bots.platforms.x import _render
from bots.platforms.x._client import XApi, XApiError, XForbiddenError, XRateLimitedError
from bots.runtime.delivery.replies import ReplyRejectedError
from bots.runtime.platform.contract import Answer, Destination, Rendered
from bots.runtime.workers.jobtypes import PermanentJobError, RetryLaterError
from bots.settings import XSettings
from storage.state import StateRepo

log = logging.getLogger(__name__)

_URL_RE = re.compile(r"https?://\S+")


class XReplyRateLimitedError(ReplyRejectedError, RetryLaterError):
    """X said 429 before posting: the reply is tried again once the window resets."""


class XReplyNotAllowedError(ReplyRejectedError, PermanentJobError):
    """X said 403: it does not allow this reply (policy); it is never retried."""


def thread_key(destination: Destination) -> str:
    """Return the state key holding a reply thread's texts and posted ids."""
    key = destination.public.get("reply_key") or f"event:{destination.message_id}"
    return f"x:thread:{key}"


def _comparable(text: str) -> str:
    # X rewrites every URL to a t.co link: compare texts without URLs and spacing.
    return " ".join(_URL_RE.sub("", text).split())


class XSender:
    """Renders answers as threads and posts them under the mention."""

    platform = "x"

    def __init__(self, settings: XSettings, api: XApi, state: StateRepo) -> None:
        self.settings = settings
        self.api = api
        self.state = state

    def render(self, answer: Answer, destination: Destination) -> Rendered:
        """Return the reply thread for answer, each post within X's limit."""
        return _render.render(answer, destination, self.settings)

    def _load(self, destination: Destination) -> dict[str, Any] | None:
        stored = self.state.get(thread_key(destination))
        return json.loads(stored) if stored else None

    def _save(self, destination: Destination, thread: dict[str, Any]) -> None:
        self.state.set(thread_key(destination), json.dumps(thread))

    async def send(self, destination: Destination, rendered: Rendered) -> str | None:
        """Post the thread's missing parts in order; return the first post's id."""
        if not destination.message_id:
            raise XReplyNotAllowedError("an X reply needs the id of the post it answers")
        fresh = json.dumps({"parts": list(rendered.payload["parts"]), "posted": []})
        thread = json.loads(self.state.set_if_absent(thread_key(destination), fresh))
        parts: list[str] = thread["parts"]
        posted: list[str] = thread["posted"]
        for index in range(len(posted), len(parts)):
            parent = posted[-1] if posted else destination.message_id
            try:
                tweet_id = await self.api.post(parts[index], in_reply_to=parent)
            except XRateLimitedError as exc:
                raise XReplyRateLimitedError(
                    f"X rate limit after {len(posted)} of {len(parts)} posts: {exc}",
                    retry_after=exc.retry_after,
                ) from exc
            except XForbiddenError as exc:
                log.warning(
                    "X does not allow this reply; it is not posted and not retried",
                    extra={"platform": "x", "parent": parent, "error": str(exc)},
                )
                raise XReplyNotAllowedError(
                    f"reply not allowed by X (403) after {len(posted)} of {len(parts)} posts: {exc}"
                ) from exc
            except XApiError as exc:
                if exc.status < 500:  # refused for sure: nothing posted by this call
                    raise ReplyRejectedError(str(exc)) from exc
                raise
            posted.append(tweet_id)
            self._save(destination, {"parts": parts, "posted": posted})
        return posted[0] if posted else None

    async def find_sent(self, destination: Destination) -> str | None:
        """Return the first post's id when every part is on X (recording any found), or None.

        None makes the runtime call `send`, which posts only the parts still missing.
        """
        thread = self._load(destination)
        if thread is None or not destination.message_id:
            return None
        parts: list[str] = thread["parts"]
        posted: list[str] = thread["posted"]
        if len(posted) < len(parts):
            since = posted[-1] if posted else destination.message_id
            body = await self.api.own_posts(since)
            mine = {
                str(t["id"]): t for t in body.get("data") or [] if isinstance(t, dict) and "id" in t
            }
            progressed = True
            while progressed and len(posted) < len(parts):
                progressed = False
                parent, wanted = (
                    posted[-1] if posted else destination.message_id,
                    parts[len(posted)],
                )
                for tweet_id, tweet in sorted(mine.items(), key=lambda kv: int(kv[0])):
                    refs = {
                        (r.get("type"), str(r.get("id")))
                        for r in tweet.get("referenced_tweets") or []
                    }
                    same = _comparable(str(tweet.get("text") or "")) == _comparable(wanted)
                    if ("replied_to", parent) in refs and same:
                        posted.append(tweet_id)
                        progressed = True
                        break
            self._save(destination, {"parts": parts, "posted": posted})
            log.info(
                "X reply thread reconciled",
                extra={"platform": "x", "posted": len(posted), "parts": len(parts)},
            )
        return posted[0] if len(posted) == len(parts) and posted else None

    async def close(self) -> None:
        """Close the API session."""
        await self.api.close()
