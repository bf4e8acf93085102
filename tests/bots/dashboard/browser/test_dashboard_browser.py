"""The dashboard in a real chromium: sign in, lists, search, a check, try it, review, safety."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from bots.app.root import App
from bots.runtime.platform.contract import Destination
from bots.runtime.review.proposals import ReviewQueue
from pipeline.records.domain import Label
from tests.bots.dashboard.conftest import PASSWORD
from tests.bots.dashboard.factory import OCR_TEXT, QUOTE, make_check, store_checks, with_details

# One chromium at a time, on one worker, last (see the Makefile's pytest target).
pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser")]


def watch(page: Page) -> list[str]:
    """Collect the page's script errors and Content-Security-Policy violations."""
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"error: {error}"))
    page.on(
        "console",
        lambda m: problems.append(m.text) if "Content Security Policy" in m.text else None,
    )
    return problems


def sign_in(page: Page, base: str, name: str) -> None:
    """Sign in through the form with the keyboard."""
    page.goto(f"{base}/signin")
    page.get_by_label("Name").fill(name)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_label("Password").press("Enter")
    page.wait_for_url(f"{base}/")


def users(app: App) -> None:
    for name, role in (("vera", "viewer"), ("rita", "reviewer")):
        app.store.users.add(name, role, PASSWORD)  # type: ignore[arg-type]


def test_sign_in_list_filter_search_and_open_a_check(
    served_app: App, serve_app: Any, page: Page, shot: Any
) -> None:
    users(served_app)
    moon, _, _ = store_checks(
        served_app.store,
        [
            make_check(text="The moon landing was staged.", claim="the moon landing was staged"),
            make_check(label=Label.ACCURATE, text="Water boils at 100 C at sea level."),
            make_check(text="Vaccines contain microchips.", claim="vaccines contain microchips"),
        ],
    )
    served = serve_app(served_app, workers=0)
    problems = watch(page)
    page.goto(f"{served.base}/")
    expect(page).to_have_url(re.compile(r"/signin\?next=/$"))
    sign_in(page, served.base, "vera")
    expect(page.locator("#total")).to_have_text("3")
    shot(page, "checks")
    page.get_by_label("Verdict").select_option("accurate")  # htmx swaps the results
    expect(page.locator("#total")).to_have_text("1")
    expect(page).to_have_url(re.compile(r"verdict=accurate"))
    page.get_by_label("Verdict").select_option("")
    page.get_by_label("Search posts and claims").fill("landing")
    expect(page.locator("#total")).to_have_text("1")
    page.get_by_role("link", name="The moon landing was staged.").click()
    expect(page).to_have_url(f"{served.base}/check/{moon.id}")
    expect(page.locator("mark")).to_have_text(QUOTE)
    expect(page.locator("time").first).not_to_contain_text("UTC")  # shown in the viewer's zone
    shot(page, "check")
    assert problems == []


@pytest.mark.slow  # a whole check on the small corpus (~20 s on two shared cores)
def test_try_it_shows_live_progress_then_the_check(
    slow_app: App, serve_app: Any, page: Page, shot: Any
) -> None:
    served = serve_app(slow_app, workers=1)  # open mode: no user yet, the local admin
    problems = watch(page)
    page.goto(f"{served.base}/try")
    shot(page, "try")
    page.get_by_label("Post text").fill("5G networks spread the coronavirus.")
    page.get_by_role("button", name="Check it").click()
    expect(page.locator("#stages li").first).to_be_visible(timeout=30_000)
    page.wait_for_url(re.compile(r"/check/[0-9a-f]+$"), timeout=60_000)
    expect(page.locator("h1")).to_contain_text("This post is")
    expect(page.locator("#claims-h")).to_be_visible()
    shot(page, "try-result")
    assert problems == []


def test_approve_in_two_tabs_at_once_posts_once_and_edits_are_rechecked(
    served_app: App, serve_app: Any, browser: Browser, shot: Any
) -> None:
    users(served_app)
    checks = store_checks(served_app.store, [make_check(platform="slack") for _ in range(2)])
    queue = ReviewQueue(served_app.store, served_app.settings)
    first, second = (
        queue.propose(
            check_id=c.id,
            destination=Destination("slack", "W1", "C1", message_id=f"m{n}", thread_id=f"m{n}"),
            reason="a person decides",
            key=f"monitor:slack:{n}",
        )
        for n, c in enumerate(checks)
    )
    served = serve_app(served_app, workers=0)
    context = browser.new_context()
    tabs = [context.new_page(), context.new_page()]
    sign_in(tabs[0], served.base, "rita")
    for tab in tabs:
        tab.goto(f"{served.base}/review")
    buttons = [
        t.locator(f"#proposal-{first.id}").get_by_role("button", name="Approve") for t in tabs
    ]
    # A double click in one tab, then the other tab's (now stale) button: one decision stands.
    buttons[0].dblclick()
    buttons[1].click()
    for tab in tabs:
        expect(tab.locator(f"#proposal-{first.id} .decided")).to_contain_text("Approved by rita")
    shot(tabs[1], "review-decided")
    replies = [j for j in served_app.store.jobs.list() if j.kind == "reply:slack"]
    assert len(replies) == 1
    tab = tabs[0]
    tab.goto(f"{served.base}/review")
    card = tab.locator(f"#proposal-{second.id}")
    card.locator("summary", has_text="Edit").click()
    card.get_by_label(re.compile("Reply text")).fill("False. Proof: https://made-up.example/x")
    card.get_by_role("button", name="Approve edited text").click()
    expect(tab.locator(f"#proposal-{second.id} [role=alert]")).to_contain_text("did not retrieve")
    shot(tab, "review-edit-refused")
    assert served_app.store.review.decision(second.id) is None
    context.close()


def test_injected_script_and_links_render_inert(
    served_app: App, serve_app: Any, page: Page
) -> None:
    (check,) = store_checks(
        served_app.store,
        [
            make_check(
                text="<script>window.pwned=1;alert(1)</script><img src=x onerror='window.pwned=2'>",
                claim="<a href='javascript:window.pwned=3'>click</a>",
                url="javascript:window.pwned=4",
            )
        ],
    )
    served = serve_app(served_app, workers=0)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    for path in (f"/check/{check.id}", f"/checks/{check.id}", "/?q=script"):
        page.goto(served.base + path)
        assert page.evaluate("window.pwned === undefined"), path
        assert page.locator("a[href^='javascript:']").count() == 0, path
        assert page.locator("script:not([src])").count() == 0, path
    page.goto(f"{served.base}/check/{check.id}")
    expect(page.locator("blockquote.post")).to_contain_text("<script>window.pwned=1")
    assert dialogs == []


def test_a_form_without_its_csrf_token_is_refused(
    served_app: App, serve_app: Any, page: Page
) -> None:
    users(served_app)
    served = serve_app(served_app, workers=0)
    sign_in(page, served.base, "rita")
    page.goto(f"{served.base}/try")
    page.evaluate("document.querySelector('form[action=\"/try\"] input[name=csrf]').remove()")
    page.get_by_label("Post text").fill("The moon is made of cheese.")
    page.get_by_role("button", name="Check it").click()
    expect(page.locator("[role=alert]")).to_contain_text("CSRF")
    status = page.evaluate(
        "fetch('/api/checks', {method: 'POST', headers: {'content-type': 'application/json'},"
        " body: JSON.stringify({text: 'The moon is cheese.'})}).then(r => r.status)"
    )
    assert status == 403
    assert served_app.store.jobs.counts()["queued"] == 0


def test_keyboard_navigation_and_phone_width(
    served_app: App, serve_app: Any, browser: Browser, shot: Any
) -> None:
    users(served_app)
    store_checks(served_app.store, [make_check() for _ in range(3)])
    served = serve_app(served_app, workers=0)
    context = browser.new_context(viewport={"width": 375, "height": 740}, is_mobile=True)
    page = context.new_page()
    problems = watch(page)
    sign_in(page, served.base, "vera")
    page.keyboard.press("Tab")
    expect(page.locator(".skip")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("main")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_label("Search posts and claims")).to_be_focused()
    for path, name in (("/", "phone-checks"), ("/overview", "phone-overview")):
        page.goto(served.base + path)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 376, f"{path} is {width}px wide on a 375px screen"
        shot(page, name)
    page.goto(f"{served.base}/overview")
    # Chart.js styles the canvas it draws on (the CSP forbids the eval a wait_for_function needs).
    expect(page.locator("#chart-per-day")).to_have_attribute("style", re.compile("display: block"))
    assert problems == []
    context.close()


def test_the_image_report_renders_inert_and_loads_no_image(
    served_app: App, serve_app: Any, page: Page, shot: Any
) -> None:
    users(served_app)
    (check,) = store_checks(served_app.store, [with_details(make_check())])
    served = serve_app(served_app, workers=0)
    problems = watch(page)
    fetched: list[str] = []
    page.on("request", lambda r: fetched.append(r.url))
    sign_in(page, served.base, "vera")
    page.goto(f"{served.base}/check/{check.id}")
    image = page.locator("#image-1")
    expect(image.locator("pre.ocr")).to_have_text(OCR_TEXT)  # the script is text
    expect(image).to_contain_text("made by AI")
    expect(image).to_contain_text("Canon EOS 5D")
    expect(page.locator("li.image.failed")).to_contain_text("could not be downloaded (404)")
    expect(page.get_by_text("Narrative 1")).to_be_visible()
    assert page.evaluate("typeof window.alert === 'function'")  # nothing ran
    assert not [u for u in fetched if "cdn.example.net" in u]  # the image was never fetched
    shot(page, "check-images")
    assert problems == []
