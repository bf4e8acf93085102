"""A reply is in any language a catalogue exists for: no other list of languages stands between
a catalogue and the posts written in its language (issue 51: Hindi and Russian posts answered in
English)."""

from __future__ import annotations

from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo

from bots.settings import Settings
from pipeline.inputs.language import SUPPORTED
from pipeline.util.i18n import (
    DEFAULT_LANGUAGES,
    DOMAIN,
    SOURCE_LANGUAGE,
    Catalogues,
    available,
    catalogue_code,
)

CATALOGUES = [code for code in available() if code != SOURCE_LANGUAGE]


def test_every_catalogue_is_in_use_by_default() -> None:
    """A catalogue added under pipeline/locales but not to DEFAULT_LANGUAGES would never reply."""
    assert set(DEFAULT_LANGUAGES) == set(available())
    assert set(Settings().reply_catalogues().languages) == set(available())


@pytest.mark.parametrize("code", CATALOGUES)
def test_each_catalogue_language_is_one_a_post_can_be_read_as(code: str) -> None:
    """Language identification can name it (a script rule or lingua's models of its script)."""
    assert {c for c in SUPPORTED if catalogue_code(c) == code}, code


@pytest.mark.parametrize("code", CATALOGUES)
def test_a_post_in_a_catalogue_language_is_answered_in_it(code: str) -> None:
    t = Settings().reply_catalogues().for_language(code)
    assert (t.language, t.notice) == (code, "")


def test_a_new_catalogue_is_taken_with_no_other_change(tmp_path: Path) -> None:
    """Swahili, compiled into a catalogue folder, is found and replies; nothing else names it."""
    catalog = Catalog(locale="sw", domain=DOMAIN)
    catalog.add("This post is false.", "Chapisho hili ni la uongo.")
    folder = tmp_path / "sw" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    with (folder / f"{DOMAIN}.mo").open("wb") as handle:
        write_mo(handle, catalog)
    codes = available(tmp_path)
    assert codes == ["en", "sw"]
    t = Catalogues(codes, directory=tmp_path).for_language("sw")
    assert t.language == "sw" and t.gettext("This post is false.") == "Chapisho hili ni la uongo."
    english = Catalogues(["en"], directory=tmp_path).for_language("sw")
    assert english.language == "en" and "Swahili" in english.notice
