"""The commands' names and descriptions in each reply catalogue's language Discord has a locale for.

The command tree's strings are `locale_str`s of gettext messages (marked `N_`, so `make catalogs`
extracts them with the reply strings); `CatalogueTranslator` answers discord.py's translation
calls from the reply catalogues in use (`FACTBOT_LANGUAGES`), so a sync carries
`name_localizations` and `description_localizations` for every Discord locale that one of them
writes: `es-ES` and `es-419` read `es`, `pt-BR` `pt`, `zh-CN` `zh`, `hi`, `fr`, `de`, and so on.
Arabic has no Discord locale, so its translations are never asked for; `zh-TW` gets none, since
the Chinese catalogue is written in simplified characters.

A message the catalogue does not translate, or whose translation Discord would refuse (a slash
command's name must be 1 to 32 lower-case letters, digits, `-` or `_`; a menu's name 1 to 32
characters; a description 1 to 100), is left out: Discord shows the English for that locale, and
the log says which.
"""

from __future__ import annotations

import logging
import unicodedata

import discord
from discord import app_commands
from discord.app_commands import TranslationContextLocation as Where

from pipeline.util.i18n import SOURCE_LANGUAGE, Catalogues, catalogue_code, locale_language

log = logging.getLogger(__name__)
NAME_MAX = 32  # characters of a command's, a group's, an option's or a menu's name
DESCRIPTION_MAX = 100
_NAMES = (Where.command_name, Where.group_name, Where.parameter_name, Where.choice_name)
_HANT = "zh-Hant"  # the Chinese catalogue is simplified: no zh-TW translation from it


def catalogue_for(locale: discord.Locale, catalogues: Catalogues) -> str | None:
    """Return the reply catalogue that writes a Discord locale, or None (English, or none)."""
    language = locale_language(locale)
    code = catalogue_code(language)
    if language == _HANT or code == SOURCE_LANGUAGE or code not in catalogues.languages:
        return None
    return code


def fits(text: str, where: Where, *, slash: bool) -> bool:
    """Return whether Discord takes text as a localised name or description at `where`."""
    if where not in _NAMES:
        return 1 <= len(text) <= DESCRIPTION_MAX
    if not 1 <= len(text) <= NAME_MAX:
        return False
    if not slash or where is Where.choice_name:  # a menu's name, a choice: any text
        return True
    return text == text.lower() and all(
        ch.isalnum() or ch in "-_'" or unicodedata.category(ch).startswith("M") for ch in text
    )


class CatalogueTranslator(app_commands.Translator):
    """discord.py's translator over factbot's reply catalogues."""

    def __init__(self, catalogues: Catalogues) -> None:
        self.catalogues = catalogues

    async def translate(
        self,
        string: app_commands.locale_str,
        locale: discord.Locale,
        context: app_commands.TranslationContextTypes,
    ) -> str | None:
        """Return the message in the locale's catalogue, or None where Discord shows English."""
        code = catalogue_for(locale, self.catalogues)
        if code is None:
            return None
        text = self.catalogues.for_language(code).translations.gettext(string.message)
        if text == string.message:
            return None  # not translated (yet): English
        slash = not isinstance(context.data, app_commands.ContextMenu)
        if not fits(text, context.location, slash=slash):
            log.warning(
                "discord refuses this translation; English is shown",
                extra={"locale": locale.value, "msgid": string.message, "translation": text},
            )
            return None
        return text
