"""The reply catalogues are complete and current: every marked string of the code is in
factbot.pot, every language translates every message with the same placeholders and its plural
forms, and every checked-in factbot.mo is its factbot.po compiled (`make catalogs`)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

from pipeline.util.i18n import DEFAULT_LANGUAGES, LOCALES

ROOT = Path(__file__).resolve().parents[3]
KEYWORDS = {"N_": None, "gettext": None, "ngettext": (1, 2)}
METHODS = [("**.py", "python")]
_FIELD_RE = re.compile(r"\{(\w*)\}")
TRANSLATED = [code for code in DEFAULT_LANGUAGES if code != "en"]


def code_messages(tree: Path) -> set[str]:
    """Return the singular msgid of every marked string under tree (as `make catalogs` does)."""
    found: set[str] = set()
    for _file, _line, message, _comments, _context in extract_from_dir(
        tree, METHODS, keywords=KEYWORDS, comment_tags=(), strip_comment_tags=True
    ):
        text = message if isinstance(message, str) else message[0]
        if text:
            found.add(text)
    return found


def catalogue(path: Path) -> Catalog:
    with path.open("rb") as handle:
        return read_po(handle)


def singular(message_id: str | tuple[str, ...]) -> str:
    return message_id if isinstance(message_id, str) else message_id[0]


def template_messages() -> set[str]:
    return {singular(m.id) for m in catalogue(LOCALES / "factbot.pot") if m.id}


def stale(trees: list[Path], template: set[str]) -> tuple[set[str], set[str]]:
    """Return (marked in the code but missing from the template, in the template but unused)."""
    code = set().union(*(code_messages(tree) for tree in trees))
    return code - template, template - code


def test_the_template_holds_every_marked_string_of_the_code() -> None:
    missing, unused = stale([ROOT / "pipeline", ROOT / "bots"], template_messages())
    assert missing == set(), "run `make catalogs` and translate the new strings"
    assert unused == set(), "run `make catalogs`: the template holds strings the code dropped"


def test_a_new_string_in_the_code_is_found_missing(tmp_path: Path) -> None:
    (tmp_path / "mod.py").write_text(
        "def reply(t):\n"
        '    return t.gettext("A brand-new notice.") + t.ngettext("{n} day", "{n} days", 2)\n'
    )
    missing, _ = stale([tmp_path], template_messages())
    assert missing == {"A brand-new notice.", "{n} day"}


@pytest.mark.parametrize("language", TRANSLATED)
def test_each_language_translates_every_message_with_its_placeholders(language: str) -> None:
    po = catalogue(LOCALES / language / "LC_MESSAGES" / "factbot.po")
    template = {singular(m.id): m for m in catalogue(LOCALES / "factbot.pot") if m.id}
    ours = {singular(m.id): m for m in po if m.id}
    assert set(ours) == set(template)
    assert po.num_plurals >= 1 and po.plural_expr
    for key, message in ours.items():
        assert not message.fuzzy, key
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        if isinstance(message.id, tuple):
            assert len(strings) == po.num_plurals, key
        assert all(s.strip() for s in strings), f"{language}: {key!r} is not translated"
        wanted = set(_FIELD_RE.findall(key)) - {"n"}  # a form for one may leave out {n}
        for text in strings:
            assert wanted <= set(_FIELD_RE.findall(text)), f"{language}: {key!r} → {text!r}"
            assert set(_FIELD_RE.findall(text)) <= set(_FIELD_RE.findall(key)) | {"n"}


@pytest.mark.parametrize("language", TRANSLATED)
def test_each_compiled_catalogue_is_its_po_compiled(language: str) -> None:
    folder = LOCALES / language / "LC_MESSAGES"
    compiled = io.BytesIO()
    write_mo(compiled, catalogue(folder / "factbot.po"))
    assert (folder / "factbot.mo").read_bytes() == compiled.getvalue(), "run `make catalogs`"
