"""Every setting is in the docs: an operator reads them there, not in the code.

The settings reference (docs/reference/settings.md) is generated from the code; the README
stays short but names every platform that answers today.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from bots.settings import Settings
from tests.conftest import REPO as ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = "\n".join(page.read_text(encoding="utf-8") for page in sorted((ROOT / "docs").rglob("*.md")))


def _names(model: type[BaseModel], prefix: str) -> list[tuple[str, str]]:
    """Return (section prefix, field) of every leaf setting, as its environment variable."""
    found = []
    for name, field in model.model_fields.items():
        kind = field.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            found += _names(kind, f"{prefix}{name.upper()}__")
        else:
            found.append((prefix, name.upper()))
    return found


def _documented(prefix: str, leaf: str) -> bool:
    if f"{prefix}{leaf}" in DOCS:
        return True
    # Shorthand beside a sibling: "`FACTBOT_JOBS__BACKOFF_INITIAL` / `BACKOFF_MAX`".
    shorthand = re.compile(rf"`(__)?{re.escape(leaf)}`")
    return any(prefix in line and shorthand.search(line) for line in DOCS.splitlines())


def test_every_setting_is_documented() -> None:
    names = _names(Settings, "FACTBOT_")
    assert len(names) > 200
    missing = [p + leaf for p, leaf in names if not _documented(p, leaf)]
    assert missing == []


def test_the_check_sees_a_missing_setting() -> None:
    assert not _documented("FACTBOT_MODEL__", "NO_SUCH_SETTING")
    assert _documented("FACTBOT_JOBS__", "BACKOFF_MAX")  # shorthand beside its sibling


def test_the_opening_names_every_platform_as_answering() -> None:
    from bots.runtime.platform.contract import PLATFORMS

    opening = README.split("\n## ", 1)[0]
    names = {"discord": "Discord", "slack": "Slack", "x": "X", "bluesky": "Bluesky"}
    names["mastodon"] = "Mastodon"
    assert [p for p in PLATFORMS if not re.search(rf"\b{names[p]}\b", opening)] == []
    assert "come next" not in opening  # every platform listed is connected today
