"""Invited sign-in links: `factbot users invite` prints one; it sets a password, once."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from bots.app.root import App
from bots.cli.main import main
from pipeline.errors import InputError
from storage import Store
from tests.bots.dashboard.conftest import csrf_of

NEW = "a brand new password"


def _accept(client: TestClient, token: str, password: str = NEW, again: str | None = None) -> int:
    page = client.get(f"/invite/{token}")
    assert page.status_code == 200, page.text
    sent = client.post(
        f"/invite/{token}",
        data={"password": password, "again": password if again is None else again,
              "csrf": csrf_of(page.text)},
        follow_redirects=False,
    )  # fmt: skip
    return sent.status_code


def test_the_cli_prints_a_link_whose_token_is_stored_only_hashed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("FACTBOT_REPLIES__PUBLIC_BASE_URL", "https://factbot.example.org/")
    result = CliRunner().invoke(
        main, ["users", "invite", "carol@example.org", "--role", "reviewer"]
    )
    assert result.exit_code == 0, result.output
    link = result.stdout.strip().splitlines()[-1]
    assert link.startswith("https://factbot.example.org/invite/")
    token = link.rsplit("/", 1)[1]
    assert len(token) >= 40
    with Store.open(tmp_path / "data" / "factbot.db") as store:
        stored = store.db.execute("SELECT token_hash, name, role FROM invites").fetchall()
        assert stored == [
            (hashlib.sha256(token.encode()).hexdigest(), "carol@example.org", "reviewer")
        ]
        invite = store.users.invitation(token)
        assert invite is not None and invite.role == "reviewer"
    bad = CliRunner().invoke(main, ["users", "invite", "not a name!", "--role", "viewer"])
    assert bad.exit_code != 0 and "user name" in bad.output


def test_following_the_link_sets_the_password_and_signs_in_once(
    app: App, client: TestClient
) -> None:
    token = app.store.users.invite("carol@example.org", "reviewer")
    assert _accept(client, token, again="something else") == 422
    assert _accept(client, token, password="short") == 422
    assert _accept(client, token) == 303
    assert client.get("/", follow_redirects=False).status_code == 200  # signed in as carol
    assert app.store.users.verify("carol@example.org", NEW) is not None
    user = app.store.users.get("carol@example.org")
    assert user is not None and user.role == "reviewer"
    assert client.get(f"/invite/{token}").status_code == 410  # used
    with pytest.raises(InputError):
        app.store.users.accept(token, "yet another password")


def test_an_expired_wrong_or_forged_link_is_refused(app: App, client: TestClient) -> None:
    token = app.store.users.invite("dan@example.org", "viewer", hours=1)
    app.store.db.execute("UPDATE invites SET expires_at = '2000-01-01T00:00:00+00:00'")
    assert client.get(f"/invite/{token}").status_code == 410
    assert client.get("/invite/not-a-token").status_code == 410
    fresh = app.store.users.invite("erin@example.org", "viewer")
    no_csrf = client.post(f"/invite/{fresh}", data={"password": NEW, "again": NEW})
    assert no_csrf.status_code == 403
    assert app.store.users.get("erin@example.org") is None


def test_an_existing_user_cannot_be_invited(app: App) -> None:
    with pytest.raises(InputError, match="exists"):
        app.store.users.invite("vera", "admin")
