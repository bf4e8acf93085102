"""Who may do what: sign-in, sessions, roles, CSRF, API keys, the open mode, headers."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from bots.app.root import App
from bots.dashboard._access import COOKIE
from bots.settings import ReplySettings, Settings
from bots.web import create_web
from tests.bots.dashboard.conftest import PASSWORD, csrf_of, sign_in
from tests.bots.dashboard.factory import make_check, store_checks


def test_open_mode_without_users_or_keys_lets_the_local_admin_in(make_app) -> None:  # type: ignore[no-untyped-def]
    app = make_app()
    with TestClient(create_web(app, workers=0)) as client:
        page = client.get("/")
        assert page.status_code == 200
        assert "Open mode" in page.text and "factbot users add" in page.text
        created = client.post("/api/checks", json={"text": "The moon is made of cheese."})
        assert created.status_code == 202  # as before the dashboard: no key needed
        app.store.users.add("ada", "admin", PASSWORD)  # the first user ends the open mode
        assert client.get("/", follow_redirects=False).status_code == 303
        assert client.post("/api/checks", json={"text": "x y z"}).status_code == 401


def test_pages_send_strangers_to_sign_in_and_back(client: TestClient) -> None:
    response = client.get("/jobs", follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"] == "/signin?next=/jobs"
    page = client.get("/signin?next=/jobs")
    assert 'name="next" value="/jobs"' in page.text
    signed = client.post(
        "/signin",
        data={"name": "ada", "password": PASSWORD, "csrf": csrf_of(page.text), "next": "/jobs"},
        follow_redirects=False,
    )
    assert signed.status_code == 303 and signed.headers["location"] == "/jobs"
    assert client.get("/jobs").status_code == 200


def test_wrong_password_is_refused_and_recorded(app: App, client: TestClient) -> None:
    page = client.get("/signin")
    response = client.post(
        "/signin", data={"name": "ada", "password": "wrong password!", "csrf": csrf_of(page.text)}
    )
    assert response.status_code == 401 and "do not match" in response.text
    assert client.get("/", follow_redirects=False).status_code == 303
    attempts = app.store.users.attempts()
    assert [(a.name, a.ok) for a in attempts] == [("ada", False)]


def test_unknown_names_and_disabled_users_cannot_sign_in(app: App, client: TestClient) -> None:
    page = client.get("/signin")
    data = {"name": "nobody", "password": PASSWORD, "csrf": csrf_of(page.text)}
    assert client.post("/signin", data=data).status_code == 401
    sign_in(client, "vera")
    assert client.get("/").status_code == 200
    app.store.users.disable("vera")  # the session ends at once
    assert client.get("/", follow_redirects=False).status_code == 303


def test_sign_in_is_rate_limited_per_name(make_app) -> None:  # type: ignore[no-untyped-def]
    app = make_app(signin_burst=3, signin_per_minute=1)
    app.store.users.add("ada", "admin", PASSWORD)
    with TestClient(create_web(app, workers=0)) as client:
        token = csrf_of(client.get("/signin").text)
        codes = [
            client.post(
                "/signin", data={"name": "ada", "password": "not it at all", "csrf": token}
            ).status_code
            for _ in range(4)
        ]
        assert codes == [401, 401, 401, 429]
        # Even the right password waits: the bucket is empty, the password is not checked.
        right = client.post("/signin", data={"name": "ada", "password": PASSWORD, "csrf": token})
        assert right.status_code == 429 and "Too many" in right.text


def test_sign_in_never_redirects_off_site(client: TestClient) -> None:
    page = client.get("/signin")
    for target in ("//evil.example/x", "https://evil.example/", "javascript:alert(1)"):
        response = client.post(
            "/signin",
            data={"name": "ada", "password": PASSWORD, "csrf": csrf_of(page.text), "next": target},
            follow_redirects=False,
        )
        assert response.headers["location"] == "/"
        page = client.get("/signin")


def test_forms_without_the_csrf_token_are_refused(client: TestClient) -> None:
    assert client.post("/signin", data={"name": "ada", "password": PASSWORD}).status_code == 403
    sign_in(client, "rita")
    refused = client.post("/try", data={"text": "The moon is made of cheese."})
    assert refused.status_code == 403 and "CSRF" in refused.text
    wrong = client.post("/try", data={"text": "The moon is cheese.", "csrf": "0" * 64})
    assert wrong.status_code == 403


def test_roles_limit_what_a_user_may_do(app: App, client: TestClient) -> None:
    sign_in(client, "vera")  # a viewer reads
    token = csrf_of(client.get("/try").text)
    assert client.get("/").status_code == 200
    assert client.post("/try", data={"text": "A cheese moon.", "csrf": token}).status_code == 403
    client.post("/signout", data={"csrf": token})
    sign_in(client, "rita")  # a reviewer checks, but does not retry jobs
    token = csrf_of(client.get("/try").text)
    tried = client.post(
        "/try", data={"text": "The moon is made of cheese.", "csrf": token}, follow_redirects=False
    )
    assert tried.status_code == 303 and tried.headers["location"].startswith("/try/")
    job_id = tried.headers["location"].rsplit("/", 1)[1]
    retry = client.post(f"/jobs/{job_id}/retry", data={"csrf": token})
    assert retry.status_code == 403 and "admin" in retry.text


def test_signing_out_ends_the_session_and_rotates_it(client: TestClient) -> None:
    sign_in(client, "ada")
    before = client.cookies.get(COOKIE)
    token = csrf_of(client.get("/").text)
    out = client.post("/signout", data={"csrf": token}, follow_redirects=False)
    assert out.status_code == 303
    assert client.cookies.get(COOKIE) != before
    assert client.get("/", follow_redirects=False).status_code == 303
    client.cookies.set(COOKIE, "forged.value.here")
    assert client.get("/", follow_redirects=False).status_code == 303


def test_session_cookie_flags_and_security_headers(make_app) -> None:  # type: ignore[no-untyped-def]
    app = make_app()
    app.settings.replies = ReplySettings(public_base_url="https://factbot.example.org")
    app.store.users.add("ada", "admin", PASSWORD)
    with TestClient(create_web(app, workers=0), base_url="https://testserver") as client:
        page = client.get("/signin")
        cookie = page.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Secure" in cookie
        csp = page.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "style-src 'self'" in csp
        assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
        assert page.headers["x-frame-options"] == "DENY"
        assert "<script>" not in page.text and "style=" not in page.text  # nothing inline


def test_api_writes_take_a_key_or_a_reviewers_session_with_csrf(make_app) -> None:  # type: ignore[no-untyped-def]
    app = make_app(api_keys=["k-123456"])
    app.store.users.add("rita", "reviewer", PASSWORD)
    body = {"text": "The moon is made of cheese."}
    with TestClient(create_web(app, workers=0)) as client:
        assert client.post("/api/checks", json=body).status_code == 401
        assert (
            client.post("/api/checks", json=body, headers={"X-API-Key": "nope"}).status_code == 401
        )
        keyed = client.post("/api/checks", json=body, headers={"Authorization": "Bearer k-123456"})
        assert keyed.status_code == 202
        sign_in(client, "rita")
        assert client.post("/api/checks", json=body).status_code == 403  # no CSRF header
        token = csrf_of(client.get("/try").text)
        ok = client.post("/api/checks", json=body, headers={"X-CSRF-Token": token})
        assert ok.status_code == 202


def test_api_reads_are_open_only_when_checks_are_public(make_app) -> None:  # type: ignore[no-untyped-def]
    for public in (False, True):
        app = make_app(api_keys=["k-123456"], public_checks=public)
        (check,) = store_checks(app.store, [make_check()])
        with TestClient(create_web(app, workers=0)) as client:
            api = client.get(f"/api/checks/{check.id}")
            report = client.get(f"/checks/{check.id}", follow_redirects=False)
            keyed = client.get(f"/api/checks/{check.id}", headers={"X-API-Key": "k-123456"})
            assert keyed.status_code == 200
            if public:
                assert api.status_code == 200 and report.status_code == 200
            else:
                assert api.status_code == 401 and report.status_code == 303
        app.close()


def test_report_pages_are_public_when_replies_link_to_them(make_app) -> None:  # type: ignore[no-untyped-def]
    app = make_app(api_keys=["k-123456"])
    app.settings.replies = ReplySettings(public_base_url="https://factbot.example.org")
    (check,) = store_checks(app.store, [make_check(platform="slack", text="secret channel text")])
    with TestClient(create_web(app, workers=0)) as client:
        report = client.get(f"/checks/{check.id}")
        assert report.status_code == 200
        assert "secret channel text" not in report.text  # a platform post's text stays private
        assert "<style>" not in report.text and "/static/report.css" in report.text
        assert client.get(f"/api/checks/{check.id}").status_code == 401


@pytest.mark.parametrize("path", ["/healthz", "/static/htmx.min.js", "/static/app.css"])
def test_health_and_assets_need_no_sign_in(client: TestClient, path: str) -> None:
    assert client.get(path).status_code == 200


def test_settings_default_keeps_the_dashboard_on_and_checks_private() -> None:
    settings = Settings()
    assert settings.dashboard.enabled and not settings.dashboard.public_checks
    assert settings.dashboard.api_keys == ()


def test_metrics_are_for_a_signed_in_admin_not_a_viewer(client: TestClient) -> None:
    assert client.get("/metrics").status_code == 401  # nobody signed in; users exist
    sign_in(client, "vera")
    assert client.get("/metrics").status_code == 401  # a viewer
    token = csrf_of(client.get("/try").text)
    client.post("/signout", data={"csrf": token})
    sign_in(client, "ada")
    answer = client.get("/metrics")
    assert answer.status_code == 200 and "factbot_checks_total" in answer.text
