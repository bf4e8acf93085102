"""What a platform adapter and the service say to each other.

An adapter (`bots.platforms.<name>`) only translates. Inbound, it turns a platform event into a
`CheckRequest` — the `Post` to check, who asked (`Actor`), who wrote it, where the answer goes
(`Destination`) and the event's natural key — and hands it to `PlatformService.intake`, which
applies the guards and stores the post, a check job and a reply job in one transaction.
Outbound, a worker runs the reply job once the check job has ended (done or dead), builds an
`Answer` and gives it to the adapter's `ReplySender`: `render` turns it into the platform's
message (`Rendered`), `send` posts it. Every rendered text is audited before it is sent: a URL
that is not one of the check's retrieved references (or factbot's own report link) stops it.

Nothing here imports a platform library; adapters are loaded by name (`load_adapters`).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from pipeline.errors import ConfigError
from pipeline.records.codec import from_plain, to_plain
from pipeline.records.domain import Check, Correction, Post

if TYPE_CHECKING:  # pragma: no cover - types only
    import asyncio

    from bots.runtime.workers.jobtypes import JobHandler
    from bots.settings import Settings
    from pipeline.util.clock import Clock
    from pipeline.util.i18n import Translator
    from storage import Store

PLATFORMS = ("discord", "slack", "x", "bluesky", "mastodon")
# The modules each adapter's extra (`pip install 'factbot[<name>]'`) brings, and their packages.
LIBRARIES: dict[str, dict[str, str]] = {
    "discord": {"discord": "discord.py", "aiohttp": "aiohttp"},
    "slack": {"slack_bolt": "slack_bolt", "slack_sdk": "slack_sdk", "aiohttp": "aiohttp"},
    "x": {"tweepy": "tweepy", "oauthlib": "oauthlib", "aiohttp": "aiohttp"},
    "bluesky": {"atproto": "atproto"},
    "mastodon": {"mastodon": "Mastodon.py"},
}


@dataclass(frozen=True)
class Actor:
    """A platform account: who asked for a check, or who wrote the post checked."""

    platform: str
    user_id: str  # the platform's raw id; pseudonymised before it is stored
    is_bot: bool = False
    is_self: bool = False  # factbot's own account
    name: str | None = None  # a display name, used in messages only, never stored


@dataclass(frozen=True)
class Destination:
    """Where and how the answer to a request is posted.

    `public` holds routing the reply job may keep (ids of the workspace, channel, thread and
    target message, an application id). `private` holds what only the reply may use and what
    is deleted once it is sent: interaction tokens, response URLs, a raw user id for a message
    only the requester sees.
    """

    platform: str
    workspace_id: str  # Discord guild, Slack team ("" for a direct message)
    channel_id: str
    message_id: str | None = None  # the message checked (the reply answers it)
    thread_id: str | None = None  # an existing thread to reply in
    public: Mapping[str, str] = field(default_factory=dict)
    private: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Return the destination as a job payload part."""
        data: dict[str, Any] = to_plain(self)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Destination:
        """Return the destination stored by `to_json` (no workspace: a direct message's "")."""
        return from_plain(cls, {**data, "workspace_id": data.get("workspace_id") or ""})


@dataclass(frozen=True)
class Note:
    """A note an adapter adds to the reply ("the attachment a.pdf is not an image…").

    `message` is a gettext message (marked `N_` in `bots.runtime.platform.messages`), said in
    the reply's language when the reply is written; `names` fill its placeholders with text
    from the post (a file name, set apart from the words around it), `numbers` with figures
    written as the reply's locale writes them. A plain string in a stored job is a note
    without values (what older jobs hold).
    """

    message: str
    names: Mapping[str, str] = field(default_factory=dict)
    numbers: Mapping[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Return the note as a job payload part."""
        return {"message": self.message, "names": dict(self.names), "numbers": dict(self.numbers)}

    @classmethod
    def from_json(cls, data: Any) -> Note:
        """Return the note stored by `to_json` (a plain string: a note without values)."""
        if isinstance(data, str):
            return cls(data)
        names = {str(k): str(v) for k, v in (data.get("names") or {}).items()}
        numbers = {str(k): float(v) for k, v in (data.get("numbers") or {}).items()}
        return cls(str(data["message"]), names, numbers)


@dataclass(frozen=True)
class CheckRequest:
    """A platform's request to check a post, as an adapter translated it."""

    post: Post
    requester: Actor
    destination: Destination
    event_key: str  # the inbound event's natural key: Slack event_id, Discord interaction id
    author: Actor | None = None  # who wrote the post, when known
    via: Literal["command", "menu", "mention", "shortcut"] = "command"
    notes: tuple[Note, ...] = ()  # said in the reply, e.g. "the attached image could not be read"


AnswerKind = Literal["correction", "failure", "refusal", "notice"]


@dataclass(frozen=True)
class Answer:
    """What the service asks an adapter to post.

    A `correction` carries the check's structured correction; the other kinds carry only
    `message`, a short text written for people (a polite failure, a friendly refusal). `private`
    asks for a message only the requester sees where the platform has one.
    """

    kind: AnswerKind
    message: str = ""
    correction: Correction | None = None
    check: Check | None = None
    report_url: str | None = None  # the full report on factbot's own site, when configured
    footer: str | None = None  # e.g. what the check cost
    notes: tuple[str, ...] = ()
    private: bool = False


@dataclass(frozen=True)
class Rendered:
    """A platform message ready to send, with every text a reader will see (for the audit)."""

    payload: Any
    texts: tuple[str, ...]


class ReplySender(Protocol):
    """The outbound half of an adapter: render an answer, post it where it belongs."""

    platform: str

    def render(self, answer: Answer, destination: Destination) -> Rendered:
        """Return the platform message for answer, within the platform's limits."""
        ...

    async def send(self, destination: Destination, rendered: Rendered) -> str | None:
        """Post rendered; return the platform's id of the message posted.

        Raise `bots.runtime.delivery.replies.ReplyRejectedError` only when the platform surely did
        not post it (a later attempt may); anything else leaves the reply pending, never repeated.
        `destination.public["reply_key"]` names this reply uniquely: send it as the platform's
        idempotency key, nonce or message metadata where it has one.

        A sender may also be a `FindsSent`: with it, a reply left pending by a worker that
        died mid-send is settled (sent once) instead of dropped.
        """
        ...


# Optional capabilities: a sender or an adapter has one when it defines its method
# (`isinstance(sender, FindsSent)`), and the runtime uses it only then.


@runtime_checkable
class FindsSent(Protocol):
    """A sender that can find the message it posted for a reply (by its reply key)."""

    async def find_sent(self, destination: Destination) -> str | None:
        """Return the id of the message carrying `destination.public["reply_key"]`, or None."""
        ...


@runtime_checkable
class Acknowledges(Protocol):
    """A sender that marks the asked message while its check runs (Slack's :eyes:)."""

    async def acknowledge(self, destination: Destination) -> None:
        """Mark the message asked about."""
        ...


@runtime_checkable
class SettlesAcks(Protocol):
    """A sender that replaces its mark by the answer's (or takes it off: None)."""

    async def settle_ack(self, destination: Destination, answer: Answer | None) -> None:
        """Replace or remove the mark."""
        ...


@runtime_checkable
class Closes(Protocol):
    """A sender holding connections that belong to the event loop that opened them."""

    async def close(self) -> None:
        """Close its connections."""
        ...


class PlatformAdapter(Protocol):
    """One platform: its sender (workers), its listener (gateway, socket), its HTTP routes."""

    name: str

    def sender(self) -> ReplySender:
        """Return the outbound half."""
        ...

    async def listen(self, stop: asyncio.Event) -> None:
        """Receive events until stop is set (return at once when events arrive over HTTP)."""
        ...

    def mount(self, api: Any) -> None:
        """Add the adapter's HTTP routes (events endpoint, OAuth) to the FastAPI app."""
        ...


@runtime_checkable
class HandlesJobs(Protocol):
    """An adapter with job kinds of its own (X's Community Notes, review cards)."""

    def job_handlers(self) -> Mapping[str, JobHandler]:
        """Return the handlers of its job kinds, by kind."""
        ...


@dataclass(frozen=True)
class Intake:
    """What became of a request."""

    status: Literal["accepted", "duplicate", "ignored", "refused"]
    reason: str = ""
    answer: Answer | None = None  # what to show the requester now (None: show nothing)
    check_id: str | None = None
    job_id: str | None = None  # the reply job
    language: str | None = None  # the post's language, once identified (answers are in it)


class RequestService(Protocol):
    """What an adapter asks of the service (`bots.runtime.platform.intake.PlatformService`)."""

    @property
    def store(self) -> Store:
        """Return the database (e.g. the reply ledger an acknowledgement is written to)."""
        ...

    async def intake(self, request: CheckRequest) -> Intake:
        """Apply the guards to request and, when it passes, submit it for a check and a reply."""
        ...

    async def seen(self, platform: str, event_key: str) -> bool:
        """Return whether an event was received before (a redelivery: answer it no more)."""
        ...

    def answer_for_error(
        self, error: BaseException | str, *, language: str | None = None, requester: bool = False
    ) -> Answer:
        """Return the private answer that tells a requester something went wrong.

        `language`: the post's, or with `requester` the asker's own (as `translator`).
        """
        ...

    def translator(self, language: str | None, *, requester: bool = False) -> Translator:
        """Return the translator of answers in language (requester: no notice, plain English)."""
        ...

    async def set_opt_out(
        self,
        platform: str,
        scope: str,
        subject_id: str,
        out: bool,
        *,
        language: str | None = None,
    ) -> Answer:
        """Opt a user or a channel out of factbot, or back in (`language`: the requester's)."""
        ...


@dataclass(frozen=True)
class PlatformContext:
    """What `bots.platforms.<name>.setup` receives."""

    settings: Settings
    store: Store
    service: RequestService
    clock: Clock


def configured(settings: Settings) -> tuple[str, ...]:
    """Return the platforms whose credentials are set."""
    names = []
    for name in PLATFORMS:
        group = getattr(settings, name, None)
        if group is not None and group.configured:
            names.append(name)
    return tuple(names)


def load_adapters(context: PlatformContext) -> dict[str, PlatformAdapter]:
    """Import and set up the adapter of every configured platform (and only those)."""
    adapters: dict[str, PlatformAdapter] = {}
    for name in configured(context.settings):
        require_extra(name)
        module = importlib.import_module(f"bots.platforms.{name}")
        adapters[name] = module.setup(context)
    return adapters


def require_extra(name: str) -> None:
    """Fail with the install command when platform name's library is not installed."""
    missing = [pkg for mod, pkg in LIBRARIES[name].items() if importlib.util.find_spec(mod) is None]
    if missing:
        raise ConfigError(
            f"FACTBOT_{name.upper()}__* credentials are set but the {name} adapter's library is "
            f"not installed ({', '.join(missing)}): pip install 'factbot[{name}]', or unset them"
        )
