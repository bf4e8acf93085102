"""What the proactive monitor reads: candidate posts from the platforms' sources.

The monitor (`bots.runtime.monitor`) does not answer mentions; it looks for suspicious posts
itself — search queries, watched accounts, hashtags, trending topics, watched channels, the
Community Notes eligible-posts feed. Each of those is a `CandidateSource` that a platform
adapter builds from its own settings (`PlatformAdapter.candidate_sources`, optional); the
adapter only translates the platform's posts into `Candidate`s. The monitor keeps each
source's cursor, scores what it finds, and enqueues checks within its budgets; where the
answer goes is decided after the check by the posting policy, never by the source.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from bots.runtime.platform.contract import Actor, Destination
from pipeline.records.domain import Post


@dataclass(frozen=True)
class Candidate:
    """One platform post a source found, with what the monitor scores it on."""

    source: str  # the source's name, e.g. "x:search:5g covid", "mastodon:hashtag:vaccines"
    post: Post  # platform, platform_id, text, url, created_at, links, image_refs (author unset)
    author: Actor
    destination: Destination  # where a reply would go: public routing only, never secrets
    thread_key: str  # the conversation's root post id: factbot answers a thread at most once
    mentions_bot: bool = False  # the author mentioned factbot (X allows a reply only then)
    followers: int = 0  # the author's reach
    engagement: int = 0  # likes + reposts + replies + quotes when the source read them
    topics: tuple[str, ...] = ()  # hashtags or the trending topic it was found under
    seen_at: datetime | None = None  # when the source read it


@dataclass(frozen=True)
class Batch:
    """What one fetch returned: candidates, and the cursor to resume from next time."""

    candidates: Sequence[Candidate]
    cursor: str | None  # None: keep the previous cursor


class CandidateSource(Protocol):
    """A place on a platform where suspicious posts are looked for."""

    name: str  # unique across sources; the monitor keys its cursor and its job ids on it

    async def fetch(self, cursor: str | None, limit: int) -> Batch:
        """Return up to limit posts newer than cursor (None: the newest), and the next cursor.

        Raise `bots.runtime.monitor.candidates.SourceUnavailableError` when the platform cannot be
        read now (rate limited, down); the monitor then skips the source until its next run.
        """
        ...


@runtime_checkable
class OffersSources(Protocol):
    """An adapter with places the proactive monitor reads (built from its settings)."""

    def candidate_sources(self) -> list[CandidateSource]:
        """Return the platform's monitor sources."""
        ...


class SourceUnavailableError(RuntimeError):
    """A source cannot be read now; `retry_after` says when to try again, when known."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after
