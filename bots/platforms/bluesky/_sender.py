"""Posting answers to Bluesky (worker processes): a reply thread under the mention.

The first post replies to the mention (`parent`) in the mention's thread (`root`); each further
post replies to the one before, with the same root. A Bluesky post cannot carry factbot's
reply key, so the thread's progress is kept in `store.state` under `bluesky:reply:<key>`: the
SHA-256 of each text to post (not the texts: they quote the post checked, which is deleted after
the retention period), saved before the first call, and the strong reference of each post made.
A retried send continues after the last post recorded, never repeats one.

`find_sent` settles a reply a worker left pending (it died, or lost the connection, between
`createRecord` and recording it): it reads the thread under the mention (`getPostThread`) and
follows factbot's own replies whose text is the next expected part, recording what it finds.
The whole thread found: its first post's URI. Part of it: None, and the send goes on from there.

Failure policy: nothing posted yet and the server refused (4xx, including 429) or the
connection never opened → `ReplyRejectedError` (a later attempt may post). Anything after a
part was posted, or a 5xx/timeout, leaves the reply pending for `find_sent` to settle.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from collections.abc import Mapping
from typing import Any

import httpx
from atproto import AsyncClient, models
from atproto.exceptions import (
    AtProtocolError,
    BadRequestError,
    NetworkError,
    RequestException,
    UnauthorizedError,
)

from bots.platforms.bluesky import _render
from bots.platforms.bluesky._render import link_facets
from bots.platforms.bluesky._session import BlueskySession
from bots.runtime.delivery.replies import ReplyRejectedError
from bots.runtime.platform.contract import Answer, Destination, Rendered
from bots.settings import BlueskySettings
from storage.state import StateRepo

log = logging.getLogger(__name__)


class ThreadPartlyPostedError(RuntimeError):
    """Some posts of a reply thread are up and the next failed: the reply stays pending."""


def _key(destination: Destination) -> str:
    public = destination.public
    return public.get("reply_key") or public.get("event_key") or destination.message_id or ""


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _strong(uri: str, cid: str) -> models.ComAtprotoRepoStrongRef.Main:
    return models.ComAtprotoRepoStrongRef.Main(uri=uri, cid=cid)


def _facets(text: str) -> list[models.AppBskyRichtextFacet.Main] | None:
    facets = [
        models.AppBskyRichtextFacet.Main(
            index=models.AppBskyRichtextFacet.ByteSlice(byte_start=start, byte_end=end),
            features=[models.AppBskyRichtextFacet.Link(uri=url)],
        )
        for start, end, url in link_facets(text)
    ]
    return facets or None


def _refused(exc: BaseException) -> bool:
    """Return whether the server surely did not create the record."""
    if isinstance(exc, BadRequestError | UnauthorizedError):
        return True
    if isinstance(exc, RequestException):  # 429 and other 4xx; 5xx may have posted
        response = exc.response
        return response is not None and 400 <= response.status_code < 500
    if isinstance(exc, NetworkError):
        return isinstance(exc.__cause__, httpx.ConnectError)
    return False


class BlueskySender:
    """Render answers as Bluesky reply threads and post them once."""

    platform = "bluesky"

    def __init__(
        self, settings: BlueskySettings, session: BlueskySession, state: StateRepo
    ) -> None:
        self.settings = settings
        self.session = session
        self.state = state

    def render(self, answer: Answer, destination: Destination) -> Rendered:
        """Return the posts of answer (300 graphemes each, links as facets)."""
        return _render.render(answer, destination, max_posts=self.settings.max_posts)

    def _load(self, key: str) -> dict[str, Any] | None:
        raw = self.state.get(f"bluesky:reply:{key}")
        return None if raw is None else dict(json.loads(raw))

    def _save(self, key: str, progress: Mapping[str, Any]) -> None:
        self.state.set(f"bluesky:reply:{key}", json.dumps(progress))

    async def send(self, destination: Destination, rendered: Rendered) -> str | None:
        """Post the thread (continuing one partly posted); return the first post's URI."""
        key = _key(destination)
        texts = [str(p["text"]) for p in rendered.payload["posts"]]
        langs = [str(code) for code in rendered.payload.get("langs", ["en"])]
        progress = self._load(key) or {"hashes": [], "posted": []}
        if not progress["posted"]:
            progress["hashes"] = [_digest(t) for t in texts]  # nothing is up: post this render
        self._save(key, progress)
        public = destination.public
        root = _strong(public["root_uri"], public["root_cid"])
        for index in range(len(progress["posted"]), len(texts)):
            posted = progress["posted"]
            parent = (
                _strong(posted[-1]["uri"], posted[-1]["cid"])
                if posted
                else _strong(public["parent_uri"], public["parent_cid"])
            )
            text = texts[index]
            try:
                created = await self.session.call(
                    functools.partial(
                        self._create, text=text, root=root, parent=parent, langs=langs
                    )
                )
            except AtProtocolError as exc:
                if not posted and _refused(exc):
                    raise ReplyRejectedError(f"Bluesky refused the reply: {exc}") from exc
                if posted:
                    raise ThreadPartlyPostedError(
                        f"post {index + 1} of {len(texts)} failed: {exc}"
                    ) from exc
                raise
            posted.append({"uri": created.uri, "cid": created.cid})
            self._save(key, progress)
        log.info("Bluesky reply posted", extra={"key": key, "posts": len(progress["posted"])})
        return str(progress["posted"][0]["uri"])

    async def _create(
        self,
        client: AsyncClient,
        *,
        text: str,
        root: models.ComAtprotoRepoStrongRef.Main,
        parent: models.ComAtprotoRepoStrongRef.Main,
        langs: list[str],
    ) -> models.AppBskyFeedPost.CreateRecordResponse:
        record = models.AppBskyFeedPost.Record(
            text=text,
            created_at=client.get_current_time_iso(),
            reply=models.AppBskyFeedPost.ReplyRef(root=root, parent=parent),
            facets=_facets(text),
            langs=langs,  # the reply's language (BCP 47), so readers' language filters work
        )
        return await client.app.bsky.feed.post.create(self.session.did, record)

    async def find_sent(self, destination: Destination) -> str | None:
        """Return the first post's URI when the whole thread is up, else None (recording parts)."""
        key = _key(destination)
        progress = self._load(key)
        if progress is None:
            return None  # nothing was ever attempted: nothing can be up
        hashes, posted = progress["hashes"], progress["posted"]
        if len(posted) < len(hashes):
            thread = await self.session.call(
                lambda client: client.invoke_query(
                    "app.bsky.feed.getPostThread",
                    params=models.AppBskyFeedGetPostThread.Params(
                        uri=destination.public["parent_uri"], depth=len(hashes) + 1
                    ),
                )
            )
            node = (
                (thread.content or {}).get("thread") if isinstance(thread.content, dict) else None
            )
            for index, digest in enumerate(hashes):
                if not isinstance(node, Mapping):
                    break
                if index < len(posted):
                    node = _reply(node, lambda view, i=index: view.get("uri") == posted[i]["uri"])
                    continue
                node = _reply(node, lambda view, d=digest: self._ours(view, d))
                if node is not None:
                    view = node["post"]
                    posted.append({"uri": view["uri"], "cid": view["cid"]})
            self._save(key, progress)
        log.info(
            "Bluesky reply reconciled",
            extra={"key": key, "found": len(posted), "expected": len(hashes)},
        )
        return str(posted[0]["uri"]) if posted and len(posted) == len(hashes) else None

    def _ours(self, view: Mapping[str, Any], digest: str) -> bool:
        author = view.get("author") or {}
        text = (view.get("record") or {}).get("text")
        return (
            author.get("did") == self.session.did
            and isinstance(text, str)
            and _digest(text) == digest
        )


def _reply(node: Mapping[str, Any], match: Any) -> Mapping[str, Any] | None:
    """Return the reply of a thread node whose post matches, or None."""
    for child in node.get("replies") or ():
        if (
            isinstance(child, Mapping)
            and isinstance(child.get("post"), Mapping)
            and match(child["post"])
        ):
            return child
    return None
