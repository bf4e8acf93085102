"""Every text factbot writes to people on a platform, besides the correction itself.

One module, so the wording is consistent, short and polite, and so no message ever carries
a stack trace, a token or a URL: adapters render these, they do not write their own.

Every message is a gettext message (`pipeline.util.i18n`), written in the reply's language:
each function takes the reply's `Translator` (`Catalogues.for_language` of the post's
language, which `PlatformService` decides), None meaning English. A translator for a
language without a catalogue is English with a one-line notice, and the notice ends the
message. An error's own reason (an `InputError`'s words) is English: English messages quote
it, other languages say what kind of problem it was in one translated sentence.

An adapter's notes (`contract.Note`: an attachment it could not use) are gettext messages too,
said by the reply job in the reply's language (`note_text`), the file's name set apart in them.
What is said about a command rather than a post (an opt-out, Slack's help) is in the
requester's language where the platform tells it (`PlatformService.translator(...,
requester=True)`).
"""

from __future__ import annotations

from babel.numbers import format_currency

from bots.runtime.platform.contract import Note
from pipeline import errors
from pipeline.errors import ConfigError, EmptyPostError, FactbotError, InputError, UnsafeURLError
from pipeline.records.domain import Correction
from pipeline.reply.links import has_link, scrub_links
from pipeline.util.i18n import N_, SOURCE_LANGUAGE, Translator, translator

CHECKING = N_("Checking this message… the answer will appear in the thread.")
NOT_IN_CHANNEL = N_("factbot is not enabled in this channel.")
CHANNEL_OPTED_OUT = N_("This channel has opted out of factbot.")
REQUESTER_OPTED_OUT = N_("You opted out of factbot; opt in again to ask for checks.")
AUTHOR_OPTED_OUT = N_("The author of this message has opted out of factbot.")
BOT_AUTHOR = N_("factbot does not check messages written by bots (itself included).")
EMPTY = N_("There is nothing to check in this message: no text or link.")
OPTED_OUT = {
    ("user", True): N_("Done: factbot will no longer check your messages or take your requests."),
    ("user", False): N_("Done: factbot takes your requests again."),
    ("channel", True): N_("Done: factbot will no longer answer in this channel."),
    ("channel", False): N_("Done: factbot answers in this channel again."),
}
_RATE = {
    "user": N_("You have asked for several checks in a short time."),
    "channel": N_("This channel has had many checks in a short time."),
    "workspace": N_("This server has had many checks in a short time."),
}
# What could not be checked, said in a reply that is not English (the reason itself is English).
NOTHING_TO_CHECK = N_(
    "factbot could not check this message: it states nothing that can be checked (only "
    "questions, greetings, opinions or very short sentences)."
)
UNSAFE_LINK = N_("factbot could not check this message: a link in it cannot be fetched safely.")
NOT_CHECKABLE = N_("factbot could not check this message.")
NOT_SET_UP = N_("factbot is not set up correctly to check this right now; its operator is told.")
NOT_FINISHED = N_("factbot could not finish this check. Please try again later.")
SORRY = N_("Sorry, factbot could not finish this check. Please try again later.")


# Discord's private answer to a command, and its pointer once the answer is posted.
CHECKING_HERE = N_("Checking this. The answer will be posted in this channel.")
CHECKING_IN_THREAD = N_("Checking this message. The answer will be posted in this thread.")
CHECKING_NEW_THREAD = N_(
    "Checking this message. The answer will be posted in a thread on the message."
)
CHECKING_AS_REPLY = N_("Checking this message. The answer will be posted as a reply to it.")
ANSWERED_IN = N_("Checked. The answer is in {channel}.")
ANSWERED_HERE = N_("Checked. The answer is in this channel.")
ANSWERED_AS_REPLY = N_("Checked. The answer is a reply to the message.")
NOTHING_GIVEN = N_("Give a text or a link to check.")
NEEDS_MANAGE_CHANNELS = N_("Only members with the Manage Channels permission can do this.")
# Slack's /factcheck help (the shortcut's name is the app's, registered in English).
SLACK_USAGE = N_(
    "Use `/factcheck <text>` or `/factcheck <link to a Slack message>` to check a post, or the "
    "message shortcut “Fact-check this message”. `/factcheck optout me` (or `channel`) stops "
    "factbot answering you (or this channel); `/factcheck optin me` undoes it."
)
SCOPE_NEEDED = N_("`{command}` takes `me` or `channel`.")
# Notes about an attachment factbot could not use ({name}: its file name, when it can be shown).
ATTACHMENT_NOTES = {
    ("unreadable", True): N_("The attachment {name} could not be read; only the text was checked."),
    ("unreadable", False): N_("An attachment could not be read; only the text was checked."),
    ("not an image", True): N_("The attachment {name} is not an image; only the text was checked."),
    ("not an image", False): N_("An attachment is not an image; only the text was checked."),
    ("too large", True): N_(
        "The image {name} is too large to read ({size} MB; factbot reads up to {limit} MB); "
        "only the text was checked."
    ),
    ("too large", False): N_(
        "An attached image is too large to read ({size} MB; factbot reads up to {limit} MB); "
        "only the text was checked."
    ),
    ("damaged", True): N_(
        "The image {name} could not be read as an image (it may be damaged); only the text was "
        "checked."
    ),
}
NAME_CHARS = 80  # a longer file name is cut (with "…"): the note stays one short sentence


def attachment_note(
    problem: str, name: str | None, *, size_mb: float = 0.0, limit_mb: float = 0.0
) -> Note:
    """Return the note about an attachment factbot could not use, naming it where it can.

    `problem` is "unreadable", "not an image", "too large" (with the sizes) or "damaged". A
    name that reads as a link ("notes.md") is not shown: a reply links only to its sources.
    """
    shown = " ".join((name or "").split())
    if len(shown) > NAME_CHARS:
        shown = shown[: NAME_CHARS - 1] + "…"
    named = bool(shown) and not has_link(shown)
    if (problem, named) not in ATTACHMENT_NOTES:  # a damaged image without a name to show
        problem = "unreadable"
    numbers = {"size": size_mb, "limit": limit_mb} if problem == "too large" else {}
    names = {"name": shown} if named else {}
    return Note(ATTACHMENT_NOTES[(problem, named)], names, numbers)


def note_text(note: Note, t: Translator | None = None) -> str:
    """Return an adapter's note in the reply's language (English when t is None)."""
    t = t or translator(SOURCE_LANGUAGE)
    numbers = {key: t.decimal(value) for key, value in note.numbers.items()}
    if note.names:
        return t.gettext_naming(note.message, note.names, **numbers)
    return t.gettext(note.message, **numbers)


def slack_usage(command: str = "", t: Translator | None = None) -> str:
    """Return Slack's /factcheck help, after what was wrong with `command` ("optout") if given."""
    t = t or translator(SOURCE_LANGUAGE)
    wrong = t.gettext(SCOPE_NEEDED, command=f"/factcheck {command}") if command else ""
    return t.space.join(filter(None, (wrong, t.gettext(SLACK_USAGE))))


def say(message: str, t: Translator | None = None, **values: object) -> str:
    """Return a message in the reply's language, its notice (if any) after it."""
    t = t or translator(SOURCE_LANGUAGE)
    return t.space.join(filter(None, (t.gettext(message, **values), t.notice)))


def opted_out(scope: str, out: bool, t: Translator | None = None) -> str:
    """Return the confirmation of an opt-out ("user" or "channel") or of opting in again."""
    return say(OPTED_OUT[(scope, out)], t)


def too_long(length: int, limit: int, t: Translator | None = None) -> str:
    """Return the refusal for a post over the length limit."""
    t = t or translator(SOURCE_LANGUAGE)
    return say(
        N_(
            "This message is too long to check ({length} characters; the limit is {limit}). "
            "Quote the part you want checked."
        ),
        t,
        length=t.number(length),
        limit=t.number(limit),
    )


def rate_limited(scope: str, wait_seconds: float, t: Translator | None = None) -> str:
    """Return the one friendly refusal of an empty rate-limit spell."""
    t = t or translator(SOURCE_LANGUAGE)
    minutes = max(1, round(wait_seconds / 60))
    again = t.ngettext(
        "Please try again in about {n} minute.",
        "Please try again in about {n} minutes.",
        minutes,
    )
    text = t.space.join((t.gettext(_RATE.get(scope, _RATE["user"])), again))
    return t.space.join(filter(None, (text, t.notice)))


def checks_spent(limit: int, t: Translator | None = None) -> str:
    """Return the refusal once a workspace used its checks of the day."""
    t = t or translator(SOURCE_LANGUAGE)
    text = t.ngettext(
        "This server has used its {n} check for today; checks resume at 00:00 UTC. "
        "An administrator can raise FACTBOT_BUDGETS__CHECKS_PER_DAY.",
        "This server has used its {n} checks for today; checks resume at 00:00 UTC. "
        "An administrator can raise FACTBOT_BUDGETS__CHECKS_PER_DAY.",
        limit,
    )
    return t.space.join(filter(None, (text, t.notice)))


def money_spent(limit: float, t: Translator | None = None) -> str:
    """Return the refusal once a workspace spent its monthly budget."""
    t = t or translator(SOURCE_LANGUAGE)
    amount = format_currency(limit, "USD", locale=t.locale)
    return say(
        N_(
            "This server has used its monthly budget ({amount}); checks resume next month. "
            "An administrator can raise FACTBOT_BUDGETS__USD_PER_MONTH."
        ),
        t,
        amount=amount,
    )


def failure(error: BaseException | str | None, t: Translator | None = None) -> str:
    """Return the polite message for a check that could not be done."""
    t = t or translator(SOURCE_LANGUAGE)
    kind, reason = _input_problem(error)
    if kind is not None:
        if t.language == SOURCE_LANGUAGE and reason:
            text = f"factbot could not check this message: {reason}"
            return t.space.join(filter(None, (text, t.notice)))
        if issubclass(kind, EmptyPostError):
            return say(NOTHING_TO_CHECK, t)
        if issubclass(kind, UnsafeURLError):
            return say(UNSAFE_LINK, t)
        return say(NOT_CHECKABLE, t)
    if isinstance(error, ConfigError):
        return say(NOT_SET_UP, t)
    if isinstance(error, FactbotError):
        return say(NOT_FINISHED, t)
    return say(SORRY, t)


def _input_problem(error: BaseException | str | None) -> tuple[type[InputError] | None, str]:
    """Return the kind of input a check could not use, and why in English, or (None, "")."""
    if isinstance(error, InputError):
        return type(error), scrub_links(str(error))
    if isinstance(error, str):  # a dead job's last error: "ErrorClass: message"
        name, _, message = error.partition(": ")
        kind = getattr(errors, name, None)
        if isinstance(kind, type) and issubclass(kind, InputError) and message:
            return kind, scrub_links(message.split("; ")[0])  # a reply links only to its sources
    return None, ""


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
