"""The texts factbot writes around a check, in every reply language: translated, right to left
where the language is, English with the notice where no catalogue is in use, and each one post
on every platform (X's weighted count, Bluesky's graphemes, Mastodon's code points, Discord)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from bots.runtime.platform import messages
from pipeline.checking.images import describe_findings, image_note
from pipeline.errors import ConfigError, EmptyPostError, FactbotError, UnsafeURLError
from pipeline.records.domain import (
    Correction,
    Document,
    Evidence,
    ImageTrace,
    Label,
    Passage,
    Stance,
    Tier,
    document_id_for,
)
from pipeline.records.image import ImageFailure, ImageOrigin, ImageReport, ImageSource
from pipeline.reply.thread import graphemes, thread_text, url_weighted, x_weighted
from pipeline.util.i18n import (
    DEFAULT_LANGUAGES,
    LRI,
    PDI,
    SOURCE_LANGUAGE,
    Catalogues,
    Translator,
    isolate_ltr,
)

CATALOGUES = Catalogues()
# Every message a requester may get, at its longest (big numbers, the longest reason).
MESSAGES: dict[str, Callable[[Translator], str]] = {
    **{
        name: (lambda t, m=message: messages.say(m, t))
        for name, message in {
            "checking": messages.CHECKING,
            "not in channel": messages.NOT_IN_CHANNEL,
            "channel opted out": messages.CHANNEL_OPTED_OUT,
            "requester opted out": messages.REQUESTER_OPTED_OUT,
            "author opted out": messages.AUTHOR_OPTED_OUT,
            "bot author": messages.BOT_AUTHOR,
            "empty": messages.EMPTY,
        }.items()
    },
    **{
        f"opt-out {scope} {out}": (lambda t, s=scope, o=out: messages.opted_out(s, o, t))
        for scope in ("user", "channel")
        for out in (True, False)
    },
    "too long": lambda t: messages.too_long(123_456, 100_000, t),
    **{
        f"rate {scope}": (lambda t, s=scope: messages.rate_limited(s, 3600 * 24, t))
        for scope in ("user", "channel", "workspace")
    },
    "checks spent": lambda t: messages.checks_spent(10_000, t),
    "money spent": lambda t: messages.money_spent(12_345.67, t),
    "nothing to check": lambda t: messages.failure(EmptyPostError("no claim"), t),
    "unsafe link": lambda t: messages.failure("UnsafeURLError: port 22 is not allowed", t),
    "not set up": lambda t: messages.failure(ConfigError("x"), t),
    "not finished": lambda t: messages.failure(FactbotError("x"), t),
    "sorry": lambda t: messages.failure(None, t),
}
# One post each: X weighs CJK and Devanagari 2, Bluesky counts graphemes, Discord 2,000.
PLATFORMS = [
    ("x", 280, x_weighted),
    ("bluesky", 300, graphemes),
    ("mastodon", 500, url_weighted),
    ("discord", 2000, len),
]
READERS = [*DEFAULT_LANGUAGES, "sw", "und"]  # sw: no catalogue; und: not identified


@pytest.mark.parametrize("language", READERS)
@pytest.mark.parametrize("name", sorted(MESSAGES))
def test_every_message_is_one_post_on_every_platform(language: str, name: str) -> None:
    text = MESSAGES[name](CATALOGUES.for_language(language))
    for platform, budget, measure in PLATFORMS:
        assert measure(text) <= budget, (platform, text)
        assert len(thread_text(text, budget=budget, measure=measure)) == 1, (platform, text)


@pytest.mark.parametrize("language", [c for c in DEFAULT_LANGUAGES if c != SOURCE_LANGUAGE])
def test_every_message_is_translated(language: str) -> None:
    english = CATALOGUES.for_language(SOURCE_LANGUAGE)
    t = CATALOGUES.for_language(language)
    for name, message in MESSAGES.items():
        assert message(t) != message(english), (language, name)


@pytest.mark.parametrize("language", ["ar", "fa"])
def test_right_to_left_messages_have_their_latin_runs_isolated(language: str) -> None:
    t = CATALOGUES.for_language(language)
    assert t.rtl
    for name, message in MESSAGES.items():
        text = message(t)
        assert isolate_ltr(text) == text, name  # every left-to-right run is already isolated
    spent = messages.checks_spent(200, t)
    assert f"{LRI}00:00 UTC.{PDI}" in spent or f"{LRI}00:00 UTC{PDI}" in spent
    assert f"{LRI}FACTBOT_BUDGETS__CHECKS_PER_DAY{PDI}" in spent


def test_arabic_messages_follow_its_plural_forms() -> None:
    t = CATALOGUES.for_language("ar")
    # Arabic's plural forms: 2 minutes is the dual, 5 a "few" form, 11 the singular accusative.
    assert "دقيقتين" in messages.rate_limited("user", 120, t)
    assert "5 دقائق" in messages.rate_limited("user", 300, t)
    assert "11 دقيقةً" in messages.rate_limited("user", 660, t)


def test_ukrainian_minutes_take_its_three_plural_forms() -> None:
    t = CATALOGUES.for_language("uk")
    said = {n: messages.rate_limited("user", 60 * n, t) for n in (1, 2, 5, 11, 21, 22)}
    assert "через 1 хвилину." in said[1] and "через 21 хвилину." in said[21]
    assert "через 2 хвилини." in said[2] and "через 22 хвилини." in said[22]
    assert "через 5 хвилин." in said[5] and "через 11 хвилин." in said[11]


def test_a_language_without_a_catalogue_gets_english_with_the_notice() -> None:
    refusal = messages.say(messages.NOT_IN_CHANNEL, CATALOGUES.for_language("sw"))
    assert refusal == (
        "factbot is not enabled in this channel. "
        "(factbot does not reply in Swahili yet, so this reply is in English.)"
    )
    only_spanish = Catalogues(["en", "es"]).for_language("de")
    limited = messages.rate_limited("channel", 600, only_spanish)
    assert limited.startswith("This channel has had many checks in a short time. Please try")
    assert limited.endswith("(factbot does not reply in German yet, so this reply is in English.)")


def test_english_keeps_the_reason_and_other_languages_say_the_kind_of_problem() -> None:
    reason = "the post has no check-worthy statement"
    english = messages.failure(f"EmptyPostError: {reason}; more")
    assert english == f"factbot could not check this message: {reason}"
    spanish = messages.failure(f"EmptyPostError: {reason}", CATALOGUES.for_language("es"))
    assert spanish.startswith("factbot no pudo verificar este mensaje: no afirma nada")
    assert messages.failure(
        UnsafeURLError("http://x.example:22/", "port 22"), CATALOGUES.for_language("de")
    ) == (
        "factbot konnte diese Nachricht nicht prüfen: Ein Link darin kann nicht sicher "
        "abgerufen werden."
    )
    assert messages.too_long(1234, 1000, CATALOGUES.for_language("de")).startswith(
        "Diese Nachricht ist zu lang für eine Prüfung (1.234 Zeichen; die Grenze liegt bei 1.000)"
    )
    assert "12.345,67" in messages.money_spent(12_345.67, CATALOGUES.for_language("de"))


def _traced(conflict: str | None, detail: str = "") -> Evidence:
    url = "https://pub.example/2012/floods"
    doc = Document(id=document_id_for(url), url=url, domain="pub.example", title="Floods", text="x")
    trace = ImageTrace(
        image_id="i1",
        image_url="https://pub.example/i.jpg",
        distance=2,
        published_at=datetime(2012, 5, 3, tzinfo=UTC),
        caption="Flooding in Bangkok",
        conflict=conflict or "",
        detail=detail,
    )
    return Evidence(
        id="e1",
        claim_id="c1",
        passage=Passage(id="p1", document_id=doc.id, position=0, text="x"),
        document=doc,
        relevance=0.9,
        tier=Tier.HIGH,
        stance=Stance.CONTEXT,
        image=trace,
    )


@pytest.mark.parametrize(
    ("language", "conflict", "sentence"),
    [
        (
            "es",
            "date",
            "Esta foto apareció el 3 may 2012 [1], con la leyenda «Flooding in Bangkok», antes "
            "de los hechos que describe la publicación.",
        ),
        (
            "fr",
            "place",
            "Cette photo est parue le 3 mai 2012 [1], avec la légende « Flooding in Bangkok » : "
            "elle ne montre pas le lieu ou l'événement que décrit la publication.",
        ),
        ("zh", None, "这张照片也曾于 2012年5月3日 出现 [1]，配文“Flooding in Bangkok”。"),
    ],
)
def test_image_findings_are_written_in_the_reply_language(
    language: str, conflict: str | None, sentence: str
) -> None:
    bare = Correction(label=Label.MISLEADING, headline="h", language=language)
    evidence = _traced(conflict, "its caption places it in Bangkok, not Manila")
    said = describe_findings(bare, [evidence], event="storm", t=CATALOGUES.for_language(language))
    assert said.note == sentence
    assert [r.number for r in said.references] == [1]


def test_arabic_image_findings_isolate_the_latin_caption() -> None:
    bare = Correction(label=Label.MISLEADING, headline="h", language="ar")
    said = describe_findings(bare, [_traced("date")], t=CATALOGUES.for_language("ar"))
    assert f"{LRI}Flooding in Bangkok{PDI}" in said.note and "[1]" in said.note
    assert said.note.startswith("ظهرت هذه الصورة")


def test_unread_images_are_said_in_the_reply_language() -> None:
    source = ImageSource(ref="https://x.example/a.png", origin=ImageOrigin.ATTACHMENT)
    one = ImageReport(failures=(ImageFailure(source, "not an image"),))
    two = ImageReport(failures=(ImageFailure(source, "too big"),) * 2)
    assert image_note(one) == "The image could not be read (not an image)."
    assert image_note(one, CATALOGUES.for_language("pt")) == "Não foi possível ler a imagem."
    assert (
        image_note(two, CATALOGUES.for_language("de")) == "2 Bilder konnten nicht gelesen werden."
    )
    assert image_note(ImageReport(), CATALOGUES.for_language("hi")) == ""


def test_an_attachment_note_names_the_file_in_the_reply_language() -> None:
    from bots.runtime.platform.contract import Note
    from pipeline.util.i18n import FSI, PDI, translator

    note = messages.attachment_note("too large", "photo 1.png", size_mb=25.04, limit_mb=20)
    assert Note.from_json(note.to_json()) == note  # as the reply job's payload keeps it
    assert messages.note_text(note) == (
        "The image photo 1.png is too large to read (25 MB; factbot reads up to 20 MB); "
        "only the text was checked."
    )
    decimal = messages.attachment_note("too large", "a.png", size_mb=20.55, limit_mb=20)
    assert "(20,6 MB; factbot lee hasta 20 MB)" in messages.note_text(decimal, translator("es"))
    # Right to left: the Latin name stands between FSI and PDI, the figures are isolated.
    arabic = messages.note_text(note, translator("ar"))
    assert f"الصورة {FSI}photo 1.png{PDI} أكبر من أن تُقرأ" in arabic
    assert arabic.count(FSI) == 1 and LRI in arabic  # "25" alone is not isolated; "MB" is
    # An Arabic name inside an English reply is fenced too, so it cannot reorder the sentence.
    english = messages.note_text(messages.attachment_note("not an image", "تقرير.pdf"))
    assert english.startswith(f"The attachment {FSI}تقرير.pdf{PDI} is not an image")
    # A name that reads as a link is not shown (a reply links only to its sources).
    assert messages.note_text(messages.attachment_note("damaged", "notes.md")) == (
        "An attachment could not be read; only the text was checked."
    )
    # An older job's note is a plain string: said as before, translated where it is a message.
    assert Note.from_json("factbot {odd} note").message == "factbot {odd} note"
    assert messages.note_text(Note("factbot {odd} note")) == "factbot {odd} note"


def test_an_app_locale_reads_as_a_reply_language() -> None:
    from pipeline.util.i18n import locale_language

    assert [locale_language(x) for x in ("es-ES", "pt-BR", "zh-CN", "zh-TW", "hi", "", None)] == [
        "es",
        "pt",
        "zh-Hans",
        "zh-Hant",
        "hi",
        None,
        None,
    ]
