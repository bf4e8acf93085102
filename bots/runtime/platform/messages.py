"""Every text factbot writes to people on a platform, besides the correction itself.

One module, so the wording is consistent, short and polite, and so no message ever carries
a stack trace, a token or a URL: adapters render these, they do not write their own.
"""

from __future__ import annotations

from pipeline import errors
from pipeline.errors import ConfigError, FactbotError, InputError
from pipeline.records.domain import Correction
from pipeline.reply.links import scrub_links
from pipeline.util.i18n import SOURCE_LANGUAGE, translator

CHECKING = "Checking this message… the answer will appear in the thread."
NOT_IN_CHANNEL = "factbot is not enabled in this channel."
CHANNEL_OPTED_OUT = "This channel has opted out of factbot."
REQUESTER_OPTED_OUT = "You opted out of factbot; opt in again to ask for checks."
AUTHOR_OPTED_OUT = "The author of this message has opted out of factbot."
BOT_AUTHOR = "factbot does not check messages written by bots (itself included)."
EMPTY = "There is nothing to check in this message: no text or link."
OPTED_OUT = {
    ("user", True): "Done: factbot will no longer check your messages or take your requests.",
    ("user", False): "Done: factbot takes your requests again.",
    ("channel", True): "Done: factbot will no longer answer in this channel.",
    ("channel", False): "Done: factbot answers in this channel again.",
}
_RATE = {
    "user": "You have asked for several checks in a short time.",
    "channel": "This channel has had many checks in a short time.",
    "workspace": "This server has had many checks in a short time.",
}


def too_long(length: int, limit: int) -> str:
    """Return the refusal for a post over the length limit."""
    return (
        f"This message is too long to check ({length:,} characters; the limit is {limit:,}). "
        "Quote the part you want checked."
    )


def rate_limited(scope: str, wait_seconds: float) -> str:
    """Return the one friendly refusal of an empty rate-limit spell."""
    minutes = max(1, round(wait_seconds / 60))
    unit = "minute" if minutes == 1 else "minutes"
    return f"{_RATE.get(scope, _RATE['user'])} Please try again in about {minutes} {unit}."


def checks_spent(limit: int) -> str:
    """Return the refusal once a workspace used its checks of the day."""
    return (
        f"This server has used its {limit} checks for today; checks resume at 00:00 UTC. "
        "An administrator can raise FACTBOT_BUDGETS__CHECKS_PER_DAY."
    )


def money_spent(limit: float) -> str:
    """Return the refusal once a workspace spent its monthly budget."""
    return (
        f"This server has used its monthly budget (${limit:,.2f}); checks resume next month. "
        "An administrator can raise FACTBOT_BUDGETS__USD_PER_MONTH."
    )


def failure(error: BaseException | str | None) -> str:
    """Return the polite message for a check that could not be done."""
    if isinstance(error, InputError):
        return f"factbot could not check this message: {scrub_links(str(error))}"
    if isinstance(error, str):  # a dead job's last error: "ErrorClass: message"
        name, _, message = error.partition(": ")
        kind = getattr(errors, name, None)
        if isinstance(kind, type) and issubclass(kind, InputError) and message:
            reason = scrub_links(message.split("; ")[0])  # a reply links only to its sources
            return f"factbot could not check this message: {reason}"
    if isinstance(error, ConfigError):
        return "factbot is not set up correctly to check this right now; its operator is told."
    if isinstance(error, FactbotError):
        return "factbot could not finish this check. Please try again later."
    return "Sorry, factbot could not finish this check. Please try again later."


def cost_footer(cost_usd: float, seconds: float, *, language: str = SOURCE_LANGUAGE) -> str:
    """Return the footer that says what a check cost, in the reply's language."""
    return translator(language).gettext(
        "Checked in {seconds} s · model cost ${cost}",
        seconds=f"{seconds:.0f}",
        cost=f"{cost_usd:.4f}",
    )


def reply_language(correction: Correction | None) -> str:
    """Return the language code a reply is tagged with: its correction's, else English."""
    return correction.language if correction is not None else SOURCE_LANGUAGE


def report_line(correction: Correction | None, url: str) -> str:
    """Return the line linking a reply to its full report, in the reply's language."""
    return translator(reply_language(correction)).gettext("Full report: {url}", url=url)
