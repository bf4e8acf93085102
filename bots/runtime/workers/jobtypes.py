"""What a job handler returns or raises: the contract between handlers and the worker pool.

Kept apart from `bots.runtime.workers.pool` so that platform adapters, which must not import the
worker or the queue, can still define job kinds of their own (X's Community Notes jobs); the
`Job` record they receive is re-exported here:

    Exception
    ├── PermanentJobError   no retry can fix it: the job is dead at once
    └── RetryLaterError     the peer asked to wait (a 429): queued again after `retry_after`
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from storage.jobs import Job

__all__ = ["Job", "JobHandler", "Outcome", "PermanentJobError", "RetryLaterError"]


class PermanentJobError(Exception):
    """A failure no retry can fix (bad input): the job is dead at once."""


class RetryLaterError(Exception):
    """The peer asked to wait: the attempt fails and the job runs again after `retry_after` s.

    The attempt counts, so a peer that never stops refusing still ends the job.
    """

    def __init__(self, message: str, *, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = max(0.0, retry_after)


@dataclass(frozen=True)
class Outcome:
    """What a finished job leaves: its result id, the writes to commit with it, what follows."""

    result_id: str | None = None
    store: Callable[[], None] | None = None  # runs inside the transaction that marks it done
    after: Callable[[], Awaitable[None]] | None = None  # runs once the job is committed done


class JobHandler(Protocol):
    """Runs one kind of job."""

    async def run(self, job: Job) -> Outcome:
        """Do the job's work and return its outcome (nothing is committed yet)."""
        ...
