"""Token, cost and time accounting for model calls, per stage and per scope.

A `UsageMeter` adds up `StageUsage` by stage name. The client keeps one meter for its whole life,
and `metering()` opens a fresh meter for the code inside the block, including the tasks it
starts, so concurrent checks each get exactly their own usage. Scopes nest: a call is counted
in every meter open around it. Everything here is plain data that round-trips through JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar, Token
from dataclasses import dataclass, replace
from types import TracebackType

from pipeline.records.codec import from_plain, to_plain

_OPEN: ContextVar[tuple[UsageMeter, ...]] = ContextVar("factbot_llm_meters", default=())


@dataclass
class StageUsage:
    """What one stage's model calls used.

    `calls` counts model answers received (a retry after invalid output is a second call);
    `failures` counts `complete()` calls that ended in an error, of which `timeouts` because no
    answer came in time and `invalid` because the answer was invalid after the retry;
    `fallbacks` counts the times the stage's caller fell back to its no-model path;
    `seconds` is the wall time of `complete()` calls, waits and retries included.
    """

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    seconds: float = 0.0
    failures: int = 0
    timeouts: int = 0
    invalid: int = 0
    fallbacks: int = 0

    def add(self, other: StageUsage) -> None:
        """Add other's counts to these."""
        self.calls += other.calls
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cost_usd += other.cost_usd
        self.seconds += other.seconds
        self.failures += other.failures
        self.timeouts += other.timeouts
        self.invalid += other.invalid
        self.fallbacks += other.fallbacks

    def to_dict(self) -> dict[str, int | float]:
        """Return the counts as a JSON-ready dict."""
        data: dict[str, int | float] = to_plain(self)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, int | float]) -> StageUsage:
        """Build usage from a dict made by `to_dict` (unknown keys are ignored)."""
        return from_plain(cls, data)


class UsageMeter:
    """Usage added up by stage."""

    def __init__(self) -> None:
        self._stages: dict[str, StageUsage] = {}

    def add(self, stage: str, usage: StageUsage) -> None:
        """Add usage to stage's total."""
        self._stages.setdefault(stage, StageUsage()).add(usage)

    def by_stage(self) -> dict[str, StageUsage]:
        """Return a copy of the usage of each stage seen so far."""
        return {stage: replace(usage) for stage, usage in self._stages.items()}

    def total(self) -> StageUsage:
        """Return the usage of all stages together."""
        total = StageUsage()
        for usage in self._stages.values():
            total.add(usage)
        return total

    def reset(self) -> None:
        """Forget everything counted so far."""
        self._stages.clear()

    def to_dict(self) -> dict[str, dict[str, int | float]]:
        """Return the usage by stage as a JSON-ready dict."""
        return {stage: usage.to_dict() for stage, usage in self._stages.items()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Mapping[str, int | float]]) -> UsageMeter:
        """Build a meter from a dict made by `to_dict`."""
        meter = cls()
        for stage, usage in data.items():
            meter.add(stage, StageUsage.from_dict(usage))
        return meter

    def __repr__(self) -> str:
        return f"UsageMeter({self.to_dict()!r})"


class MeterScope:
    """A block (`with` or `async with`) whose model calls are counted in a fresh meter."""

    def __init__(self) -> None:
        self.meter = UsageMeter()
        self._token: Token[tuple[UsageMeter, ...]] | None = None

    def __enter__(self) -> UsageMeter:
        self._token = _OPEN.set((*_OPEN.get(), self.meter))
        return self.meter

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._token is not None:
            _OPEN.reset(self._token)
            self._token = None

    async def __aenter__(self) -> UsageMeter:
        return self.__enter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.__exit__(exc_type, exc, tb)


def metering() -> MeterScope:
    """Count the model calls made inside the block (and its tasks) in a fresh meter."""
    return MeterScope()


def count_fallback(stage: str, meter: UsageMeter | None = None) -> None:
    """Count one fallback of stage to its no-model path in every open meter (and `meter`)."""
    for each in dict.fromkeys([*_OPEN.get(), *([meter] if meter is not None else [])]):
        each.add(stage, StageUsage(fallbacks=1))


def open_meters() -> tuple[UsageMeter, ...]:
    """Return the meters open around the current code, outermost first."""
    return _OPEN.get()
