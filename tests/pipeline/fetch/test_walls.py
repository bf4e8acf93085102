"""Walls: saved pages of paywalls, consent walls and bot protection, and pages that are not."""

from __future__ import annotations

import pytest

from pipeline.errors import ExtractionError, FetchError
from pipeline.fetch.extract import extract_document
from pipeline.fetch.fetcher import Fetcher, FetchPolicy
from pipeline.fetch.walls import detect_wall
from tests.conftest import FIXTURES
from tests.support.httpserver import Response, serve

PAGES = FIXTURES / "pages"
URL = "https://news.example/2024/05/story"


def page(name: str) -> str:
    return (PAGES / name).read_text(encoding="utf-8")


WALLS = [
    ("wall_cloudflare_challenge.html", "bot protection (Cloudflare challenge)"),
    ("wall_cloudflare_blocked.html", "bot protection (Cloudflare challenge)"),
    ("wall_datadome.html", "bot protection (DataDome)"),
    ("wall_perimeterx.html", "bot protection (PerimeterX)"),
    ("wall_akamai.html", "bot protection (Akamai)"),
    ("wall_recaptcha.html", "bot protection (CAPTCHA)"),
    ("wall_hcaptcha.html", "bot protection (CAPTCHA)"),
    ("wall_consent_onetrust.html", "consent wall (OneTrust)"),
    ("wall_consent_quantcast.html", "consent wall (Quantcast)"),
    ("wall_consent_didomi.html", "consent wall (Didomi)"),
    ("wall_consent_sourcepoint.html", "consent wall (Sourcepoint)"),
    ("wall_consent_plain.html", "consent wall"),
    ("wall_paywall_schema.html", "paywall (isAccessibleForFree is false)"),
    ("wall_paywall_phrase.html", 'paywall ("this article is for subscribers")'),
    ("wall_paywall_meter.html", 'paywall ("you\'ve reached your limit of free articles")'),
]

# Real articles that carry wall markers: a newsletter box and "Already a subscriber?", a consent
# banner over a full fact-check, paywall markup around a full text, bot-detection tags and a
# reCAPTCHA comment form, a consent-manager script on a short brief.
NOT_WALLS = [
    "news_article.html",
    "news_subscribe_footer.html",
    "factcheck_with_consent_banner.html",
    "factcheck_pants_on_fire.html",
    "news_paywall_full_text.html",
    "news_protected_full.html",
    "news_brief_short.html",
    "hidden_injection.html",
]


@pytest.mark.parametrize(("name", "reason"), WALLS)
def test_walls_are_recognised(name: str, reason: str) -> None:
    assert detect_wall(page(name)) == reason


@pytest.mark.parametrize(("name", "reason"), WALLS)
def test_extraction_refuses_walls_with_the_reason(name: str, reason: str) -> None:
    with pytest.raises(ExtractionError) as caught:
        extract_document(page(name), url=URL, domain="news.example")
    assert caught.value.reason.startswith(f"{reason}: only ")


@pytest.mark.parametrize("name", NOT_WALLS)
def test_articles_with_wall_markers_are_not_walls(name: str) -> None:
    html = page(name)
    assert detect_wall(html) is None
    assert len(extract_document(html, url=URL, domain="news.example").text.split()) >= 80


def test_a_consent_banner_over_a_short_brief_is_not_a_wall() -> None:
    brief = page("news_brief_short.html")
    banner = (
        '<div class="notice"><p>We value your privacy. Select Accept all or Reject all.</p>'
        "<button>Accept all</button><button>Reject all</button></div>"
    )
    assert detect_wall(brief.replace("<nav>", banner + "<nav>")) is None


def test_a_long_article_about_cookie_banners_is_not_a_consent_wall() -> None:
    paragraph = (
        "<p>Regulators said the cookie banners on many sites make Reject all harder to find "
        "than Accept all, and that our partners lists run to hundreds of companies.</p>"
    )
    html = f"<html><body><article>{paragraph * 12}</article></body></html>"
    assert detect_wall(html) is None
    extract_document(html, url=URL, domain="news.example")


def test_status_and_headers_count() -> None:
    assert detect_wall("", 403, {"CF-Mitigated": "challenge"}) == (
        "bot protection (Cloudflare challenge)"
    )
    challenge = "<html><body><p>Please verify you are a human to continue.</p></body></html>"
    assert detect_wall(challenge, 429) == "bot protection (HTTP 429 challenge)"
    assert detect_wall(challenge) is None  # the words alone could be anywhere
    assert detect_wall(challenge, 404) is None
    # A long page with a challenge marker still counts when the status says "challenge".
    long_page = "<html><body>" + "<p>word</p>" * 300 + "<div id='px-captcha'></div></body></html>"
    assert detect_wall(long_page) is None
    assert detect_wall(long_page, 403) == "bot protection (PerimeterX)"


@pytest.mark.parametrize("html", ["", "   ", "\x00\x01 binary", "<<<>>>", "<p>unclosed"])
def test_odd_input_never_raises(html: str) -> None:
    assert detect_wall(html) is None


def test_the_status_passed_to_extraction_is_used() -> None:
    challenge = "<html><body><p>" + "Checking your browser before accessing. " * 3 + "</p></body>"
    with pytest.raises(ExtractionError, match=r"^.*bot protection \(HTTP 503 challenge\)"):
        extract_document(challenge + "</html>", url=URL, domain="news.example", status=503)


async def test_the_fetcher_names_a_challenge_behind_an_error_status() -> None:
    challenge = page("wall_cloudflare_challenge.html").encode()
    with serve() as site:
        site.route("/story", Response(403, challenge, "text/html; charset=UTF-8"))
        site.route("/gone", Response(403, b"<html><body>Forbidden</body></html>", "text/html"))
        async with Fetcher(FetchPolicy(allowed_networks=("127.0.0.1/32",))) as fetcher:
            with pytest.raises(FetchError) as caught:
                await fetcher.fetch(f"{site.base}/story")
            with pytest.raises(FetchError) as plain:
                await fetcher.fetch(f"{site.base}/gone")

    assert caught.value.status == 403
    assert caught.value.reason == "HTTP status 403: bot protection (Cloudflare challenge)"
    assert plain.value.reason == "HTTP status 403"
