"""The dashboard over real HTTP: each check's language is shown, and the list filters by it."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator

import httpx
import pytest

from bots.app.root import App
from pipeline.records.domain import Check
from tests.bots.api.test_api import serving
from tests.bots.dashboard.conftest import PASSWORD, csrf_of
from tests.bots.dashboard.factory import make_check, store_checks


@pytest.fixture
def base(app: App) -> Iterator[str]:
    with serving(app, workers=0) as url:
        yield url


def _sign_in(client: httpx.Client) -> None:
    page = client.get("/signin")
    answer = client.post(
        "/signin",
        data={"name": "vera", "password": PASSWORD, "csrf": csrf_of(page.text), "next": "/"},
    )
    assert answer.status_code == 303, answer.text


def _ids(html: str) -> list[str]:
    return re.findall(r'href="/check/([0-9a-f]+)"', html)


def _in(language: str | None, text: str) -> Check:
    check = make_check(text=text)
    return dataclasses.replace(check, post=dataclasses.replace(check.post, language=language))


def test_the_list_shows_and_filters_by_language(app: App, base: str) -> None:
    spanish, arabic, chinese, older = store_checks(
        app.store,
        [
            _in("es", "El 5G propaga el coronavirus."),
            _in("ar", "شبكات الجيل الخامس تنشر فيروس كورونا."),
            _in("zh-Hant", "5G網絡傳播新冠病毒。"),
            _in(None, "5G towers spread the coronavirus."),
        ],
    )
    with httpx.Client(base_url=base, timeout=30) as client:
        _sign_in(client)
        everything = client.get("/")
        assert everything.status_code == 200
        assert set(_ids(everything.text)) == {spanish.id, arabic.id, chinese.id, older.id}
        # Each row says its language; the menu offers those that occur, and "not identified".
        row = re.search(rf"<tr>(?:(?!</tr>).)*?/check/{arabic.id}.*?</tr>", everything.text, re.S)
        assert row and '<td lang="ar">ar</td>' in row.group(0)
        for code in ("es", "ar", "zh-Hant", "none"):
            assert f'<option value="{code}"' in everything.text, code
        assert _ids(client.get("/", params={"language": "ar"}).text) == [arabic.id]
        picked = client.get("/", params={"language": "zh-Hant"})
        assert _ids(picked.text) == [chinese.id]
        assert '<option value="zh-Hant" selected>' in picked.text
        assert _ids(client.get("/", params={"language": "none"}).text) == [older.id]
        assert _ids(client.get("/", params={"language": "es", "verdict": "false"}).text) == [
            spanish.id
        ]
        # A language no check has matches none; nothing about it is an error.
        nothing = client.get("/", params={"language": "<b>ko</b>"})
        assert nothing.status_code == 200 and _ids(nothing.text) == []
        assert "<b>ko</b>" not in nothing.text
        # The check's own page names its language.
        page = client.get(f"/check/{chinese.id}")
        assert page.status_code == 200 and "zh-Hant" in page.text
