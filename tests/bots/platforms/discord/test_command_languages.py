"""The commands are registered with their names and descriptions in every Discord locale that a
reply catalogue in use writes (issue 51), through the Discord stand-in's real sync endpoint."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import discord as discordpy
import pytest
from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from discord import app_commands

from bots.platforms.discord._localise import CatalogueTranslator, catalogue_for
from pipeline.util.i18n import DOMAIN, Catalogues, available
from tests.bots.platforms.discord.conftest import start_bot, stop_bot
from tests.support.fake_discord import FakeDiscord

# The catalogues translated when the commands were localised: each must name every command.
REQUIRED = {"es-ES": "es", "es-419": "es", "pt-BR": "pt", "fr": "fr", "de": "de", "hi": "hi"}
REQUIRED["zh-CN"] = "zh"
MENU = {"es-ES": "Verificar este mensaje", "de": "Diese Nachricht prüfen", "zh-CN": "核查这条消息"}


def _by_name(commands: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in commands}


async def test_the_synced_commands_carry_their_localisations(
    indexed: Path, embedder: Any, discord: FakeDiscord
) -> None:
    bot = await start_bot(indexed, embedder, discord)
    await stop_bot(bot)
    [sync] = discord.sent("PUT", "/applications/100/commands")
    commands = _by_name(sync.json)
    menu, factcheck, factbot = (
        commands["Fact-check this message"],
        commands["factcheck"],
        commands["factbot"],
    )
    for locale in REQUIRED:
        assert locale in menu["name_localizations"], locale
        assert locale in factcheck["name_localizations"], locale
        assert locale in factcheck["description_localizations"], locale
        assert locale in factbot["description_localizations"], locale
        for option in factcheck["options"]:
            assert locale in option["description_localizations"], (option["name"], locale)
        for sub in factbot["options"]:
            assert locale in sub["description_localizations"], (sub["name"], locale)
    for locale, name in MENU.items():
        assert menu["name_localizations"][locale] == name
    assert factcheck["name_localizations"]["es-ES"] == "verificar"
    # Every Discord locale a catalogue in use writes, and only those (no zh-TW: the Chinese
    # catalogue is simplified; Arabic has no Discord locale); English is the default itself.
    writes = {
        locale.value
        for locale in discordpy.Locale
        if catalogue_for(locale, Catalogues(available())) is not None
    }
    assert set(REQUIRED) <= writes
    assert set(menu["name_localizations"]) <= writes
    assert not {"zh-TW", "en-US", "en-GB"} & set(menu["name_localizations"])
    # The stand-in hands the definitions back as Discord does: the client reads them again.
    listed = _by_name(discord.commands)
    assert listed["factcheck"]["name_localizations"] == factcheck["name_localizations"]


@pytest.fixture
def spanish_and_hindi(tmp_path: Path) -> Catalogues:
    """Catalogues where Spanish names /factcheck as Discord refuses and Hindi leaves it empty."""
    for code, name in (("es", "Verificar Esto"), ("hi", "")):
        catalog = Catalog(locale=code, domain=DOMAIN)
        catalog.add("factcheck", name)
        catalog.add(
            "Fact-check this message", "Verificar este mensaje con espacios" if name else ""
        )
        folder = tmp_path / code / "LC_MESSAGES"
        folder.mkdir(parents=True)
        with (folder / f"{DOMAIN}.mo").open("wb") as handle:
            write_mo(handle, catalog)
    return Catalogues(["es", "hi"], directory=tmp_path)


async def test_a_missing_or_refused_translation_falls_back_to_english(
    spanish_and_hindi: Catalogues, caplog: pytest.LogCaptureFixture
) -> None:
    translator = CatalogueTranslator(spanish_and_hindi)
    where = app_commands.TranslationContextLocation

    async def callback(interaction: discordpy.Interaction) -> None:
        """Unused."""

    command: app_commands.Command[Any, Any, Any] = app_commands.Command(
        name=app_commands.locale_str("factcheck"), description="x", callback=callback
    )
    name: app_commands.TranslationContextTypes = app_commands.TranslationContext(
        location=where.command_name, data=command
    )
    es, hi = discordpy.Locale.spain_spanish, discordpy.Locale.hindi
    with caplog.at_level(logging.WARNING):
        # "Verificar Esto" has a capital and a space: not a slash command's name
        assert await translator.translate(app_commands.locale_str("factcheck"), es, name) is None
    assert "discord refuses this translation" in caplog.text
    # Hindi's catalogue lacks it: English, silently
    assert await translator.translate(app_commands.locale_str("factcheck"), hi, name) is None

    # a menu's name may hold spaces and capitals, up to 32 characters ("...con espacios" is 35)
    async def on_message(interaction: discordpy.Interaction, message: discordpy.Message) -> None:
        """Unused."""

    menu = app_commands.ContextMenu(name="Fact-check this message", callback=on_message)
    menu_name: app_commands.TranslationContextTypes = app_commands.TranslationContext(
        location=where.command_name, data=menu
    )
    message = app_commands.locale_str("Fact-check this message")
    assert await translator.translate(message, es, menu_name) is None
