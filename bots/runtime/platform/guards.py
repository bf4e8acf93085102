"""Who may ask for a check, where, how often and at what cost: the guards of every platform.

Each guard returns `None` (go on) or a `Stop`: `ignore` says nothing at all (a bot's event),
`refuse` carries the one message the requester sees, privately where the platform can, in the
reply language the service decided (`t`, a `Translator`; None: English). The
order matters: cheap and silent first, then lists and opt-outs, then length, then the rate
limits (which spend a token) and last the budgets (which read the requests table).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from bots.runtime.platform import messages
from bots.runtime.platform.contract import CheckRequest
from bots.settings import BudgetSettings, GuardSettings
from pipeline.util.clock import Clock
from pipeline.util.i18n import Translator
from storage import Store
from storage.platform import Bucket


@dataclass(frozen=True)
class Stop:
    """Why a request goes no further, and what (if anything) the requester is told."""

    status: str  # "ignored" or "refused"
    reason: str  # for logs and metrics
    message: str | None = None  # None: say nothing (e.g. a refusal already sent this spell)


def _channel_key(platform: str, channel_id: str) -> str:
    return f"{platform}:{channel_id}"


class Guards:
    """The guards, over the store and the settings."""

    def __init__(
        self, store: Store, guards: GuardSettings, budgets: BudgetSettings, clock: Clock
    ) -> None:
        self.store = store
        self.settings = guards
        self.budgets = budgets
        self.clock = clock

    def before_dedupe(self, request: CheckRequest) -> Stop | None:
        """Return a stop for events factbot never answers (bots, itself)."""
        if request.requester.is_bot or request.requester.is_self:
            return Stop("ignored", "requester is a bot")
        return None

    def static(
        self,
        request: CheckRequest,
        requester: str,
        author: str | None,
        t: Translator | None = None,
    ) -> Stop | None:
        """Return a stop from the guards that spend nothing: lists, bots, opt-outs, length."""
        dest = request.destination
        platform = dest.platform
        channel = _channel_key(platform, dest.channel_id)
        if channel in self.settings.deny_channels or (
            self.settings.allow_channels and channel not in self.settings.allow_channels
        ):
            return Stop("refused", "channel not allowed", messages.say(messages.NOT_IN_CHANNEL, t))
        if request.author is not None and (request.author.is_bot or request.author.is_self):
            return Stop("refused", "author is a bot", messages.say(messages.BOT_AUTHOR, t))
        repo = self.store.platform
        if repo.opted_out(platform, "channel", [dest.channel_id]):
            return Stop("refused", "channel opted out", messages.say(messages.CHANNEL_OPTED_OUT, t))
        if repo.opted_out(platform, "user", [requester]):
            return Stop(
                "refused", "requester opted out", messages.say(messages.REQUESTER_OPTED_OUT, t)
            )
        if author is not None and repo.opted_out(platform, "user", [author]):
            return Stop("refused", "author opted out", messages.say(messages.AUTHOR_OPTED_OUT, t))
        text = request.post.text
        if not text.strip() and not request.post.links and not request.post.image_refs:
            return Stop("refused", "empty post", messages.say(messages.EMPTY, t))
        if len(text) > self.settings.max_post_chars:
            return Stop(
                "refused",
                "post too long",
                messages.too_long(len(text), self.settings.max_post_chars, t),
            )
        return None

    def limits(
        self, request: CheckRequest, requester: str, t: Translator | None = None
    ) -> Stop | None:
        """Return a stop from the budgets or the rate limits (run it in the intake transaction)."""
        dest = request.destination
        budget = self._budget(dest.platform, dest.workspace_id, t)
        if budget is not None:
            return budget
        return self._rate(dest.platform, dest.workspace_id, dest.channel_id, requester, t)

    def _rate(
        self, platform: str, workspace: str, channel: str, requester: str, t: Translator | None
    ) -> Stop | None:
        s = self.settings
        buckets = {
            "user": Bucket(
                f"rate:{platform}:user:{requester}", s.user_burst, s.user_per_hour / 3600
            ),
            "channel": Bucket(
                f"rate:{platform}:channel:{channel}", s.channel_burst, s.channel_per_hour / 3600
            ),
            "workspace": Bucket(
                f"rate:{platform}:workspace:{workspace}",
                s.workspace_burst,
                s.workspace_per_hour / 3600,
            ),
        }
        taken = self.store.platform.take(list(buckets.values()))
        if taken.allowed:
            return None
        scope = next(name for name, b in buckets.items() if b.key == taken.empty)
        if not taken.first_refusal:
            return Stop("refused", f"rate limited ({scope}), refusal already sent")
        wait = 1.0 / buckets[scope].per_second
        return Stop("refused", f"rate limited ({scope})", messages.rate_limited(scope, wait, t))

    def _budget(self, platform: str, workspace: str, t: Translator | None) -> Stop | None:
        b = self.budgets
        if not b.checks_per_day and not b.usd_per_month:
            return None
        now = self.clock.now().astimezone(UTC)
        day = datetime(now.year, now.month, now.day, tzinfo=UTC)
        month = datetime(now.year, now.month, 1, tzinfo=UTC)
        repo = self.store.platform
        if b.checks_per_day:
            count, _ = repo.usage_since(platform, workspace, day)
            if count >= b.checks_per_day:
                return Stop(
                    "refused", "daily checks spent", messages.checks_spent(b.checks_per_day, t)
                )
        if b.usd_per_month:
            _, cost = repo.usage_since(platform, workspace, month)
            if cost >= b.usd_per_month:
                return Stop(
                    "refused", "monthly budget spent", messages.money_spent(b.usd_per_month, t)
                )
        return None
