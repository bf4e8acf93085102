"""The service side of every platform request: guards, then post + check job + reply job.

`PlatformService.intake` is all an adapter calls once it has translated an event. A request that
passes the guards goes in the one way every request does (`CheckRequests.submit`, with kind
`post`) and is stored in ONE transaction: the post (its author pseudonymised), a `check` job, a
`reply:<platform>` job that waits for it, and a row in `platform_requests` — all keyed by the
event's natural key, so a redelivered event (Slack's retries, a replayed gateway event, a second
process) stores nothing and answers "duplicate". A post factbot checked moments ago is answered from
the stored check: only the reply job is queued.

Deduplication, the budgets and the rate limits (`submit`'s `admit`) and the writes (its `record`)
share one write transaction, so concurrent deliveries of one event (Slack's timeout retry racing
the first delivery, two processes) store it once and spend one rate-limit token.

The answers decided here (the refusals, the "checking…" notice) are in the post's language: the
service identifies it (`LanguageIdentifier`, the platform's language field as the hint) and
picks the reply translator from the catalogues in use (`FACTBOT_LANGUAGES`), English with a
notice for a language without one. The code is kept in the reply job's payload (`language`),
so a failure posted later is in the same language.

The reply job runs once the check job has ended, done or dead (`bots.runtime.delivery.deliver`), so
a worker that dies between the check and the reply leaves a queued reply job, not silence.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging

from bots.runtime.checking.requests import CheckRequests, FollowUp, Requested, RequestToCheck
from bots.runtime.checking.reuse import ReuseHit, ReuseIndex
from bots.runtime.platform import messages
from bots.runtime.platform.contract import Answer, CheckRequest, Intake
from bots.runtime.platform.guards import Guards, Stop
from bots.runtime.platform.privacy import Pseudonyms
from bots.settings import Settings
from pipeline.inputs.language import LanguageIdentifier
from pipeline.records.domain import Post, new_id
from pipeline.util.clock import SYSTEM, Clock
from pipeline.util.i18n import SOURCE_LANGUAGE, Translator, translator
from storage import Store
from storage.codec import dt_out
from storage.platform import Forgotten

log = logging.getLogger(__name__)

IDENTIFY_CHARS = 1000  # a post's language is read from its start: a long post's tells as much


def reply_kind(platform: str) -> str:
    """Return the job kind of a platform's replies (a worker claims those it can send)."""
    return f"reply:{platform}"


class PlatformService:
    """Guards, pseudonyms and submission of platform requests."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        *,
        clock: Clock = SYSTEM,
        reuse: ReuseIndex | None = None,
        requests: CheckRequests | None = None,
        languages: LanguageIdentifier | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.clock = clock
        self.languages = languages
        self.catalogues = settings.reply_catalogues()
        self.requests = requests or CheckRequests(
            store,
            reuse if settings.reuse.enabled else None,
            max_attempts=settings.jobs.max_attempts,
        )
        self.pseudonyms = Pseudonyms(store, settings.privacy)
        self.guards = Guards(store, settings.guards, settings.budgets, clock)

    async def intake(self, request: CheckRequest) -> Intake:
        """Apply the guards to request and, when it passes, store it for a check and a reply."""
        dest = request.destination
        store = self.store
        stop = self.guards.before_dedupe(request)
        if stop is not None:
            return self._stopped(request, stop.status, stop.reason, stop.message)
        if await self.seen(dest.platform, request.event_key):
            return await store.call(self._duplicate, request)
        requester, author = await store.call(self._people, request)
        language = await self.post_language(request.post)
        t = self.translator(language)
        stop = await store.call(self.guards.static, request, requester, author, t)
        if stop is not None:
            return self._stopped(request, stop.status, stop.reason, stop.message)
        post = dataclasses.replace(request.post, author=author)
        stops: list[Stop] = []

        def admit(reused: ReuseHit | None) -> str | None:
            # In the write transaction: a second delivery racing this one finds its request.
            if self.store.platform.find(dest.platform, request.event_key) is not None:
                return "duplicate"
            stop = self.guards.limits(request, requester, t)
            if stop is not None:
                stops.append(stop)
                return stop.reason
            return None

        def record(requested: Requested) -> None:
            self._record(request, requested, requester, author)

        requested = await self.requests.submit(
            RequestToCheck(
                post,
                origin=dest.platform,
                key=request.event_key,
                follow=self._reply(request, language),
            ),
            admit=admit,
            record=record,
        )
        if stops:
            stop = stops[0]
            return self._stopped(request, stop.status, stop.reason, stop.message)
        if not requested.created or requested.follow_job is None:
            return await store.call(self._duplicate, request)
        log.info(
            "platform request accepted",
            extra={
                "platform": dest.platform,
                "event": request.event_key,
                "via": request.via,
                "reused": requested.reused is not None,
            },
        )
        return Intake(
            "accepted",
            "reused" if requested.reused else "queued",
            answer=Answer("notice", message=messages.say(messages.CHECKING, t), private=True),
            check_id=requested.check_id,
            job_id=requested.follow_job.id,
            language=language,
        )

    async def post_language(self, post: Post) -> str | None:
        """Return the language of a post's answers: identified, else the platform's field."""
        if self.languages is None or not post.text.strip():
            return post.language
        found = await asyncio.to_thread(
            self.languages.identify, post.text[:IDENTIFY_CHARS], hint=post.language
        )
        return found.code

    def translator(self, language: str | None, *, requester: bool = False) -> Translator:
        """Return the translator of the answers to a post in language (None: English).

        `requester`: language is the asker's own (their app's locale), so a language without a
        catalogue in use answers in plain English, without the notice meant for posts.
        """
        t = self.catalogues.for_language(language or "en")
        return translator(SOURCE_LANGUAGE) if requester and t.notice else t

    async def seen(self, platform: str, event_key: str) -> bool:
        """Return whether an event was received before (its request is stored): a redelivery."""
        return await self.store.call(self.store.platform.find, platform, event_key) is not None

    def _people(self, request: CheckRequest) -> tuple[str, str | None]:
        """Return the stored forms of the requester's and the author's ids."""
        platform = request.destination.platform
        requester = self.pseudonyms.user(platform, request.requester.user_id)
        author = self.pseudonyms.user(platform, request.author.user_id) if request.author else None
        return requester, author

    def _reply(self, request: CheckRequest, language: str | None) -> FollowUp:
        dest = request.destination
        return FollowUp(
            reply_kind(dest.platform),
            {
                "event_key": request.event_key,
                "language": language,
                "destination": dest.to_json(),
                "notes": [note.to_json() for note in request.notes],
                "via": request.via,
            },
            dedupe_key=f"reply:{dest.platform}:{request.event_key}",
            max_attempts=max(self.settings.jobs.max_attempts, 5),
        )

    def _record(
        self, request: CheckRequest, requested: Requested, requester: str, author: str | None
    ) -> None:
        """Store the platform's request row (in `submit`'s transaction, with the jobs)."""
        dest = request.destination
        check_job, follow_job = requested.check_job, requested.follow_job
        self.store.platform.add(
            {
                "id": new_id(),
                "platform": dest.platform,
                "event_key": request.event_key,
                "workspace_id": dest.workspace_id,
                "channel_id": dest.channel_id,
                "requester": requester,
                "author": author,
                "message_id": dest.message_id,
                "post_id": check_job.post_id if check_job else None,
                "check_id": requested.check_id,
                "check_job_id": check_job.id if check_job else None,
                "reply_job_id": follow_job.id if follow_job else None,
                "created_at": dt_out(self.clock.now()),
            }
        )

    def _duplicate(self, request: CheckRequest) -> Intake:
        found = self.store.platform.find(request.destination.platform, request.event_key)
        log.info(
            "duplicate platform event; nothing enqueued",
            extra={"platform": request.destination.platform, "event": request.event_key},
        )
        return Intake(
            "duplicate",
            "event already received",
            check_id=found.check_id if found else None,
            job_id=found.reply_job_id if found else None,
        )

    def _stopped(
        self, request: CheckRequest, status: str, reason: str, message: str | None
    ) -> Intake:
        log.info(
            "platform request stopped",
            extra={
                "platform": request.destination.platform,
                "event": request.event_key,
                "status": status,
                "reason": reason,
            },
        )
        answer = Answer("refusal", message=message, private=True) if message else None
        return Intake(status, reason, answer=answer)  # type: ignore[arg-type]

    def answer_for_error(
        self, error: BaseException | str, *, language: str | None = None, requester: bool = False
    ) -> Answer:
        """Return the private answer that tells a requester something went wrong.

        `language`: the post's, or with `requester` the asker's own (as `translator`).
        """
        if isinstance(error, BaseException):
            log.warning("platform request failed", extra={"error": repr(error)})
        message = messages.failure(error, self.translator(language, requester=requester))
        return Answer("failure", message=message, private=True)

    async def set_opt_out(
        self,
        platform: str,
        scope: str,
        subject_id: str,
        out: bool,
        *,
        language: str | None = None,
    ) -> Answer:
        """Opt a user (their platform id) or a channel out of factbot, or back in.

        `language` is the requester's, where the platform says it (a Discord interaction's
        locale, a Slack user's `users.info` locale); the confirmation is in English otherwise,
        and for a language without a catalogue in use.
        """
        if scope not in ("user", "channel"):
            raise ValueError(f"scope must be 'user' or 'channel', not {scope!r}")
        store = self.store
        if scope == "user":
            subject = await store.call(self.pseudonyms.user, platform, subject_id)
        else:
            subject = subject_id
        await store.call(store.platform.set_opt_out, platform, scope, subject, out)
        log.info("opt-out changed", extra={"platform": platform, "scope": scope, "out": out})
        message = messages.opted_out(scope, out, self.translator(language, requester=True))
        return Answer("notice", message=message, private=True)

    def forget(
        self, platform: str, *, user_id: str | None = None, channel_id: str | None = None
    ) -> Forgotten:
        """Delete a user's (raw platform id) or a channel's requests and data."""
        requester = self.pseudonyms.user(platform, user_id) if user_id is not None else None
        return self.store.platform.forget(platform, requester=requester, channel_id=channel_id)
