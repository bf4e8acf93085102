"""The AI Note Writer API's calls, following X's public contract where its versions differ.

- Evaluation: `POST /2/evaluate_note` (the guide, working writers) and `POST /2/notes/evaluate`
  (the current spec) are both live somewhere. The first is tried; a 404 tries the other, and the
  one that answered is used from then on. `{note_text, post_id}` answers
  `{data: {claim_opinion_score}}`, a number that may be negative.
- Creation: `POST /2/notes` answers 200 or 201 with `{data: {id}}` or `{data: {note_id}}`.
- The eligible posts: `post_selection` = `feed_size:<size>,feed_lang:<lang>`; fields asked with
  `tweet.fields` and `referenced_tweets.id` (the guide's spelling); an X that answers 400 to it
  is asked with `post.fields` and `referenced_posts.id` instead (newer spec versions), and a
  post field X names as unknown in a 400 is dropped (the optional ones: requesters'
  suggestions, matched media notes). Either spelling is read back (`_events`).
- `notes_written` is read with `note.fields` (status, test_result), else X shows the id and
  the note only.

Every call here is a Community Notes call: the client counts it in the shared window
(`_client.Limits`).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any

from bots.platforms.x._client import MEDIA_FIELDS, XApi, XApiError

log = logging.getLogger(__name__)

EVALUATE_ROUTES = ("/2/evaluate_note", "/2/notes/evaluate")
ELIGIBLE_ROUTE = "/2/notes/search/posts_eligible_for_notes"
WRITTEN_ROUTE = "/2/notes/search/notes_written"
NOTE_FIELDS = "id,info,status,test_result"
POST_FIELDS = (
    "author_id",
    "created_at",
    "lang",
    "entities",
    "attachments",
    "note_tweet",
    "referenced_tweets",
)
OPTIONAL_FIELDS = (  # what requesters pointed at, and media notes: dropped if X refuses them
    "suggested_source_links",
    "suggested_source_links_with_counts",
    "note_request_suggestions",
    "matched_media_notes",
)
SPELLINGS = {
    "tweets": ("tweet.fields", "referenced_tweets"),
    "posts": ("post.fields", "referenced_posts"),
}
WRITTEN_PAGES = 5


class NotesApi:
    """The Community Notes calls of one client, remembering which spellings X answers."""

    def __init__(self, api: XApi) -> None:
        self.api = api
        self.evaluate_route = EVALUATE_ROUTES[0]
        self.spelling = "tweets"
        self.refused_fields: set[str] = set()

    async def evaluate(self, note_text: str, post_id: str) -> float | None:
        """Return X's claim_opinion_score of a note on a post (None if X gave none).

        A 404 from one spelling tries the other; two 404s raise the last (a route X lacks
        for now: the caller retries later, it says nothing of the note).
        """
        first = self.evaluate_route
        routes = [first, *(r for r in EVALUATE_ROUTES if r != first)]
        body: dict[str, Any] = {}
        for index, route in enumerate(routes):
            try:
                body = await self.api.raw(
                    "POST", route, json={"note_text": note_text, "post_id": post_id}
                )
            except XApiError as exc:
                if exc.status != 404 or index == len(routes) - 1:
                    raise
                log.info("X has no such evaluate route; trying the other", extra={"route": route})
                continue
            if route != self.evaluate_route:
                log.info("X evaluates notes at another route", extra={"route": route})
                self.evaluate_route = route
            break
        value = (body.get("data") or {}).get("claim_opinion_score")
        return float(value) if isinstance(value, int | float) else None

    async def create(self, body: Mapping[str, Any]) -> str | None:
        """Submit a note; return its id (X answers `id` or `note_id`)."""
        answer = await self.api.raw("POST", "/2/notes", json=body)
        data = answer.get("data") or {}
        return str(data.get("note_id") or data.get("id") or "") or None

    async def eligible(
        self, *, test_mode: bool, limit: int, size: str, lang: str
    ) -> dict[str, Any]:
        """Return one page of the posts eligible for a note, with their referenced posts."""
        tried: set[str] = set()
        while True:
            try:
                body = await self.api.raw(
                    "GET",
                    ELIGIBLE_ROUTE,
                    params=self._params(test_mode=test_mode, limit=limit, size=size, lang=lang),
                )
            except XApiError as exc:
                if exc.status != 400 or not self._adapt(str(exc), tried):
                    raise
                continue
            self.api.bill_reads(body, "notes:eligible")
            return body

    def _params(self, *, test_mode: bool, limit: int, size: str, lang: str) -> dict[str, Any]:
        fields_key, refs = SPELLINGS[self.spelling]
        fields = [f for f in (*POST_FIELDS, *OPTIONAL_FIELDS) if f not in self.refused_fields]
        fields = [refs if f == "referenced_tweets" else f for f in fields]
        return {
            "test_mode": str(test_mode).lower(),
            "max_results": max(1, min(100, limit)),
            "post_selection": f"feed_size:{size},feed_lang:{lang}",
            fields_key: ",".join(fields),
            "expansions": ",".join(
                [
                    "author_id",
                    "attachments.media_keys",
                    f"{refs}.id",
                    f"{refs}.id.author_id",
                    f"{refs}.id.attachments.media_keys",
                ]
            ),
            "media.fields": ",".join(MEDIA_FIELDS),
            "user.fields": "username,public_metrics",
        }

    def _adapt(self, message: str, tried: set[str]) -> bool:
        """Change what is asked after a 400 that names it; return whether anything changed."""
        for field in OPTIONAL_FIELDS:
            if field in message and field not in self.refused_fields:
                log.info("X does not know a post field; not asked again", extra={"field": field})
                self.refused_fields.add(field)
                return True
        for spelling, (fields_key, _) in SPELLINGS.items():
            if spelling != self.spelling and spelling not in tried:
                current_key, current_refs = SPELLINGS[self.spelling]
                if current_key in message or current_refs in message:
                    tried.add(self.spelling)
                    log.info("X asks for the other field spelling", extra={"fields": fields_key})
                    self.spelling = spelling
                    return True
        return False

    async def written(self, test_mode: bool) -> AsyncIterator[dict[str, Any]]:
        """Yield the notes factbot wrote, with their status and test results (a few pages)."""
        token: str | None = None
        for _ in range(WRITTEN_PAGES):
            params: dict[str, Any] = {
                "test_mode": str(test_mode).lower(),
                "max_results": 100,
                "note.fields": NOTE_FIELDS,
            }
            if token:
                params["pagination_token"] = token
            body = await self.api.raw("GET", WRITTEN_ROUTE, params=params)
            for item in body.get("data") or []:
                if isinstance(item, dict):
                    yield item
            token = (body.get("meta") or {}).get("next_token")
            if not token:
                return
