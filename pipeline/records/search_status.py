"""What evidence sources a check could reach: stored with the check, read by the reply writer.

A check with no evidence means one of two very different things: factbot searched and found
nothing credible, or factbot could not search at all (its local index is empty and live search
is off or unreachable). `SearchStatus` keeps them apart, so a reply never blames the claim for
factbot's own blindness, and an operator reading a check sees which provider failed and why.

`SearchStatus.live` is `off` (not configured), `ok` (every provider answered at least once),
`partial` (some did), or `unreachable` (none did: the probe or every request failed).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from pipeline.records.codec import from_plain, to_plain


class LiveSearch(StrEnum):
    """How live web search went for one check."""

    OFF = "off"
    OK = "ok"
    PARTIAL = "partial"
    UNREACHABLE = "unreachable"


@dataclass(frozen=True)
class ProviderStatus:
    """One provider's part in a check: whether it answered, and why not when it did not."""

    provider: str
    reachable: bool
    reason: str = ""  # "" when it answered; else the probe's or the last request's failure
    seconds: float = 0.0  # the probe's (or the slowest failed request's) duration


@dataclass(frozen=True)
class LeadStatus:
    """One page suggested as evidence (`Post.leads`) and what became of it in a check."""

    url: str
    read: bool  # fetched and in the index, where it is evidence like a search result's page
    reason: str = ""  # why it was not read ("" when it was)


@dataclass(frozen=True)
class SearchStatus:
    """The evidence sources of one check: the local index and each live search provider."""

    live: LiveSearch = LiveSearch.OFF
    providers: tuple[ProviderStatus, ...] = ()
    local_documents: int | None = None  # documents in the local index at the start; None: unknown
    off_reason: str = ""  # why live search is off, e.g. the setting that turned it off
    # Reverse image search providers the check asked about its images (apart from `live`: a
    # picture's look-up says nothing about whether the claims could be searched).
    reverse_image: tuple[ProviderStatus, ...] = ()
    # published fact-checks in the fact-check index at the start (None: unknown or not used):
    # a check that can match them is not blind, even with no page to search
    fact_checks: int | None = None
    # The pages suggested as evidence (`Post.leads`), each read or not and why
    leads: tuple[LeadStatus, ...] = ()

    @property
    def blind(self) -> bool:
        """Return whether no evidence source could be searched (empty index, no live search,
        no published fact-check to match, no suggested page read)."""
        no_live = self.live in (LiveSearch.OFF, LiveSearch.UNREACHABLE)
        read = any(lead.read for lead in self.leads)
        return no_live and self.local_documents == 0 and not self.fact_checks and not read

    def failures(self) -> tuple[ProviderStatus, ...]:
        """Return the providers that never answered."""
        return tuple(p for p in self.providers if not p.reachable)

    def live_problem(self, *, short: bool = False) -> str:
        """Return why live search gave nothing ("" when it worked or was never asked).

        short keeps each provider's reason to its kind ("network error", "HTTP 503"), for
        replies: the full reasons are for operators.
        """
        if self.live is LiveSearch.OFF:
            return f"live search is off{f' ({self.off_reason})' if self.off_reason else ''}"
        failed = "; ".join(
            f"{p.provider}: {(p.reason.split(':')[0] if short else p.reason) or 'no answer'}"
            for p in self.failures()
        )
        if self.live is LiveSearch.UNREACHABLE:
            return f"live search was unreachable ({failed})" if failed else "live search failed"
        if self.live is LiveSearch.PARTIAL:
            return f"some live search providers failed ({failed})"
        return ""

    def blind_reason(self, *, short: bool = False) -> str:
        """Return why factbot could not search ("" when it could); short: for a reply."""
        if not self.blind:
            return ""
        return f"its local evidence index is empty and {self.live_problem(short=short)}"

    def after(self, reports: Iterable[tuple[str, bool, str, float]]) -> SearchStatus:
        """Return the status once the check's searches ran: (provider, ok, reason, seconds).

        A provider that passed the probe counts as answering when one of its searches did; when
        every one failed, it did not (with the last failure's reason). One never asked keeps
        what the probe said.
        """
        if self.live is LiveSearch.OFF:
            return self
        ok: dict[str, bool] = {}
        reasons: dict[str, str] = {}
        seconds: dict[str, float] = {}
        for provider, answered, reason, took in reports:
            ok[provider] = ok.get(provider, False) or answered
            if not answered:
                reasons[provider] = reason
                seconds[provider] = max(seconds.get(provider, 0.0), took)
        providers = []
        for p in self.providers:
            if not p.reachable or p.provider not in ok:
                providers.append(p)
            elif ok[p.provider]:
                providers.append(ProviderStatus(p.provider, True, "", p.seconds))
            else:
                why = reasons.get(p.provider, "")
                providers.append(ProviderStatus(p.provider, False, why, seconds[p.provider]))
        return replace(self, live=_overall(tuple(providers)), providers=tuple(providers))

    def to_json(self) -> dict[str, Any]:
        """Return the status as a JSON object (as stored with the check), with why it was blind."""
        data: dict[str, Any] = to_plain(self)
        data["could_not_search"] = self.blind_reason()
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SearchStatus:
        """Return the status stored by `to_json` (an empty object: a check from before)."""
        return from_plain(cls, data)


def probed(providers: Sequence[ProviderStatus], *, local_documents: int | None) -> SearchStatus:
    """Return the status before searching, from the reachability probe of every provider."""
    return SearchStatus(
        live=_overall(tuple(providers)), providers=tuple(providers), local_documents=local_documents
    )


def _overall(providers: tuple[ProviderStatus, ...]) -> LiveSearch:
    if not providers:
        return LiveSearch.OFF
    up = sum(p.reachable for p in providers)
    if up == len(providers):
        return LiveSearch.OK
    return LiveSearch.PARTIAL if up else LiveSearch.UNREACHABLE
