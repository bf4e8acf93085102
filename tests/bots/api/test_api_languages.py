"""Which language a check read the post as, and wrote its reply in, over the real HTTP API."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from bots.app.root import App
from bots.settings import Settings
from tests.bots.api.test_api import serving
from tests.conftest import fresh_database


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, embedder, indexed_database) -> Iterator[str]:  # type: ignore[no-untyped-def]
    folder = tmp_path_factory.mktemp("data")
    fresh_database(indexed_database, folder / "factbot.db")
    app = App(Settings(data_dir=folder), embedder=embedder)
    with serving(app) as base:
        yield base
    app.close()


def _check(server: str, text: str) -> dict[str, Any]:
    created = httpx.post(f"{server}/api/checks?wait=60", json={"text": text}, timeout=60)
    assert created.status_code in (200, 201), created.text
    data: dict[str, Any] = created.json()
    assert httpx.get(f"{server}/api/checks/{data['id']}").json() == data  # stored as answered
    return data


def test_a_short_hindi_post_is_read_as_hindi_and_answered_in_hindi(server: str) -> None:
    """Read as Marathi before issue 51, so answered in English."""
    data = _check(server, "गाय का दूध कैंसर ठीक करता है")
    assert data["post"]["language"] == "hi"
    assert data["language"] == {
        "post": "hi",
        "post_name": "Hindi",
        "claims": {},
        "reply": "hi",
        "reply_name": "Hindi",
        "reply_reason": "post language",
        "reply_note": "the reply is in the post's language",
    }
    assert data["correction"]["language"] == "hi"
    assert all(c["language"] == "hi" for c in data["claims"]) and data["claims"]
    headline = data["correction"]["headline"]
    assert any("\u0900" <= ch <= "\u097f" for ch in headline) and "post" not in headline


def test_a_post_in_a_language_without_a_catalogue_says_why_the_reply_is_english(
    server: str,
) -> None:
    data = _check(server, "Η κυβέρνηση αύξησε τους φόρους στα καύσιμα κατά 40 τοις εκατό.")
    language = data["language"]
    assert (language["post"], language["post_name"]) == ("el", "Greek")
    assert (language["reply"], language["reply_reason"]) == ("en", "no catalogue")
    assert "English" in language["reply_note"]
    assert "Greek" in data["correction"]["headline"]  # the notice says it to people too


def test_a_claim_in_another_language_than_its_post_is_named(server: str) -> None:
    text = (
        "The World Health Organization confirmed that 5G networks spread the coronavirus "
        "in every country of Europe last year. "
        "El gobierno anunció que las vacunas contra la gripe causan autismo en los niños."
    )
    data = _check(server, text)
    post = data["language"]["post"]
    by_claim = {c["id"]: c["language"] for c in data["claims"]}
    assert {"en", "es"} <= set(by_claim.values())
    assert data["language"]["claims"] == {k: v for k, v in by_claim.items() if v != post}
    assert data["language"]["claims"]  # one of the two differs from the post's
