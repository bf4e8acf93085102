"""Walls that stand where an article should be: bot protection, consent walls and paywalls.

A wall is recognised by two things together: a marker of the service or pattern that draws it
(a Cloudflare challenge script, a consent manager's container, schema.org
`isAccessibleForFree: false`, "subscribe to continue reading") and how little else the page
holds. Markers alone are not enough: consent-manager scripts, Cloudflare's bot detection and
paywall markup also sit on pages that carry their full text, and those are not walls.

Failure policy: `detect_wall` never raises; HTML lxml cannot parse is judged by its markers and
a rough word count.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

import lxml.html
from lxml import etree

# Statuses bot-protection services answer a challenge with.
BOT_STATUSES = frozenset({403, 429, 503})
# A challenge page shows a few dozen words; even a short news brief shows well over this.
_SMALL_PAGE_WORDS = 150
_TINY_PAGE_WORDS = 60
# Article paragraphs a paywall leaves as a teaser; with paywall markup alone, fewer still.
_TEASER_WORDS = 200
_BARE_WORDS = 100
# A consent wall's words make up at least this share of what the page shows.
_CONSENT_SHARE = 0.5
# Without a consent manager's container, the page's own words must make the case, and the page
# must be short: a long article about cookie banners quotes their buttons too.
_CONSENT_PHRASES_BARE = 3
_CONSENT_BARE_WORDS = 250

_BOT_MARKERS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "Cloudflare challenge",
        re.compile(
            r"<title>\s*(?:just a moment(?:\.\.\.|…)|attention required! \| cloudflare)"
            r"|_cf_chl_opt|\bcf-chl-|challenge-platform/h/[a-z]/orchestrate"
            r"|cf-browser-verification",
            re.I,
        ),
    ),
    # Only the challenge itself: DataDome's and PerimeterX's tags sit on every page they guard.
    ("DataDome", re.compile(r"captcha-delivery\.com", re.I)),
    ("PerimeterX", re.compile(r"px-captcha|press (?:&amp;|&) hold", re.I)),
    ("Imperva", re.compile(r"incapsula incident id", re.I)),
)
_AKAMAI_TITLE = re.compile(r"<title>\s*access denied\s*</title>", re.I)
_AKAMAI_REFERENCE = re.compile(r"reference #\s*[0-9a-f]+\.[0-9a-f]+\.")  # in the page's text
_CAPTCHA = re.compile(
    r"hcaptcha\.com|\b(?:h-captcha|g-recaptcha)\b|google\.com/recaptcha|recaptcha/api\.js", re.I
)
_CHALLENGE_WORDS = re.compile(
    r"verify (?:that )?you are (?:a )?human|checking (?:if the site connection is secure|your "
    r"browser)|are you a robot|unusual traffic|enable javascript and cookies to continue"
    r"|complete the security check",
    re.I,
)

_CONSENT_MANAGERS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("OneTrust", re.compile(r"onetrust|optanon|cookielaw\.org", re.I)),
    ("Quantcast", re.compile(r"qc-cmp|quantcast", re.I)),
    ("Didomi", re.compile(r"didomi", re.I)),
    ("Sourcepoint", re.compile(r"sp_message|sourcepoint|sp-prod\.net|privacy-mgmt\.com", re.I)),
    ("TrustArc", re.compile(r"trustarc|truste\.com", re.I)),
    ("Usercentrics", re.compile(r"usercentrics", re.I)),
    ("Cookiebot", re.compile(r"cookiebot", re.I)),
    ("Funding Choices", re.compile(r"fc-consent-root|fundingchoicesmessages", re.I)),
)
_CONSENT_PHRASES = tuple(
    re.compile(p)
    for p in (
        r"we (?:value|care about|respect) your privacy",
        r"\baccept all\b",
        r"\breject all\b",
        r"\baccept (?:all )?cookies\b",
        r"\bi accept\b",
        r"\bagree and (?:continue|proceed|close)\b",
        r"\bmanage (?:your )?(?:cookie )?(?:options|preferences|settings|choices)\b",
        r"\bbefore you continue\b",
        r"\bcookie (?:settings|preferences|policy)\b",
        r"\blegitimate interest\b",
        r"\bour (?:\d+ )?partners\b",
    )
)
# Words of text about consent, wherever it sits.
_CONSENT_VOCABULARY = re.compile(
    r"cookie|privacy|consent|partners|personal data|legitimate interest", re.I
)
_CONTROLS = frozenset({"button", "a", "label"})
_CONSENT_CONTAINER = re.compile(
    r"onetrust|optanon|qc-cmp|didomi|sp_message|consent|cookie|gdpr|\bcmp\b|truste|usercentrics"
    r"|cybot",
    re.I,
)

_PAYWALL_PHRASES = re.compile(
    r"subscribe (?:now )?to (?:continue|keep) reading|subscribe to read (?:the|this|more)"
    r"|(?:this|the) (?:content|article|story) is (?:only )?(?:for|available to|exclusive to|"
    r"reserved for) (?:paying |our )?subscribers|for subscribers only|subscribers only"
    r"|to continue reading,? (?:please )?(?:subscribe|log in|sign in)"
    r"|you(?:['’]ve| have) reached (?:your|the) (?:limit of )?(?:free )?"
    r"(?:article|monthly|story)\w*"
    r"|you have read all (?:of )?your free articles"
    r"|become a (?:subscriber|member) to (?:read|continue)"
    r"|create a free account to (?:continue|keep) reading"
    r"|unlock this (?:article|story)",
    re.I,
)
_NOT_FREE = re.compile(r"[\"']isAccessibleForFree[\"']\s*:\s*[\"']?false\b", re.I)
_PAYWALL_CONTAINER = re.compile(
    r"(?:^|[-_])(?:paywall|regwall|meter(?:ed)?-?wall)(?:$|[-_])|^tp-(?:modal|backdrop)$"
    r"|^subscriber-only$|^premium-(?:wall|content)$|^(?:article|content)-locked$"
    r"|^subscription-(?:wall|required)$",
    re.I,
)
_OUTSIDE_ARTICLE = frozenset({"nav", "header", "footer", "aside", "form", "button", "dialog"})
_UNSEEN = "ancestor::script or ancestor::style or ancestor::noscript or ancestor::template"
_VISIBLE_TEXT = etree.XPath(f"//body//text()[not({_UNSEEN})]")
_TAGS = re.compile(r"<script\b.*?</script>|<style\b.*?</style>|<[^>]*>", re.I | re.S)


def detect_wall(
    html: str,
    status: int | None = None,
    headers: Mapping[str, str] | None = None,
    *,
    tree: Any = None,
) -> str | None:
    """Return why the page is a wall ("paywall (...)", "consent wall (...)", ...) or None.

    tree, when given, is html already parsed (as served: before any visibility pass); the page
    is then not parsed again.
    """
    lowered = {k.lower(): v for k, v in (headers or {}).items()}
    if tree is None:
        tree = _parse(html)
    page = _Page(tree, html)
    return (
        _bot_protection(html, page, status, lowered)
        or _consent_wall(html, page)
        or _paywall(html, page)
    )


class _Page:
    """Word counts of a page's visible text: all of it, about consent, and in article paragraphs.

    `consent_words` counts words inside consent managers' containers; `consent_like_words` adds
    text that speaks of cookies, privacy or partners and controls labelled like "Accept all".
    """

    def __init__(self, tree: Any, html: str) -> None:
        self.words = self.consent_words = self.consent_like_words = self.article_words = 0
        self.paywall_markup = False
        if tree is None:
            text = " ".join(_TAGS.sub(" ", html).split())
            self.text = text.lower()
            self.words = self.article_words = len(text.split())
            return
        consent = set()
        for element in tree.iter():
            names = _names(element)
            if names and _CONSENT_CONTAINER.search(names):
                consent.add(element)
            if names and any(_PAYWALL_CONTAINER.search(n) for n in names.split()):
                self.paywall_markup = True
        pieces: list[str] = []
        for node in _VISIBLE_TEXT(tree):
            count = len(node.split())
            if not count:
                continue
            pieces.append(str(node))
            self.words += count
            parent = node.getparent()
            owner = parent.getparent() if node.is_tail else parent
            parents = list(_ancestors(owner))
            if any(p in consent for p in parents):
                self.consent_words += count
                self.consent_like_words += count
                continue
            lowered = str(node).lower()
            if _CONSENT_VOCABULARY.search(lowered) or (
                owner is not None
                and owner.tag in _CONTROLS
                and any(phrase.search(lowered) for phrase in _CONSENT_PHRASES)
            ):
                self.consent_like_words += count
            if any(p.tag == "p" for p in parents) and not any(
                p.tag in _OUTSIDE_ARTICLE for p in parents
            ):
                self.article_words += count
        self.text = " ".join(" ".join(pieces).split()).lower()


def _bot_protection(
    html: str, page: _Page, status: int | None, headers: dict[str, str]
) -> str | None:
    challenged = status in BOT_STATUSES
    if headers.get("cf-mitigated", "").strip().lower() == "challenge":
        return "bot protection (Cloudflare challenge)"
    if challenged or page.words < _SMALL_PAGE_WORDS:
        for name, marker in _BOT_MARKERS:
            if marker.search(html):
                return f"bot protection ({name})"
        if _AKAMAI_TITLE.search(html) and _AKAMAI_REFERENCE.search(page.text):
            return "bot protection (Akamai)"
    if (challenged or page.words < _TINY_PAGE_WORDS) and _CAPTCHA.search(html):
        return "bot protection (CAPTCHA)"
    if challenged and _CHALLENGE_WORDS.search(page.text):
        return f"bot protection (HTTP {status} challenge)"
    return None


def _consent_wall(html: str, page: _Page) -> str | None:
    phrases = sum(1 for phrase in _CONSENT_PHRASES if phrase.search(page.text))
    if phrases < 2 or not page.words:
        return None
    in_manager = page.consent_words / page.words >= _CONSENT_SHARE
    about_consent = (
        page.consent_like_words / page.words >= _CONSENT_SHARE
        and phrases >= _CONSENT_PHRASES_BARE
        and page.words < _CONSENT_BARE_WORDS
    )
    if not (in_manager or about_consent):
        return None
    manager = next((name for name, marker in _CONSENT_MANAGERS if marker.search(html)), None)
    return f"consent wall ({manager})" if manager else "consent wall"


def _paywall(html: str, page: _Page) -> str | None:
    if page.article_words >= _TEASER_WORDS:
        return None  # the article is there, whatever the markup says
    if _NOT_FREE.search(html) or _not_free_microdata(html):
        return "paywall (isAccessibleForFree is false)"
    phrase = _PAYWALL_PHRASES.search(page.text)
    if phrase:
        return f'paywall ("{phrase.group(0)}")'
    # Paywall markup alone also wraps metered articles shown in full: only a bare teaser counts.
    if page.paywall_markup and page.article_words < _BARE_WORDS:
        return "paywall (paywall markup)"
    return None


def _not_free_microdata(html: str) -> bool:
    for tag in re.findall(r"<meta[^>]*isAccessibleForFree[^>]*>", html, re.I):
        if re.search(r"content\s*=\s*[\"']?false\b", tag, re.I):
            return True
    return False


def _parse(html: str) -> Any:
    if not html.strip():
        return None
    parser = lxml.html.HTMLParser(encoding="utf-8", remove_comments=True, remove_pis=True)
    try:
        return lxml.html.document_fromstring(html.encode("utf-8", errors="replace"), parser)
    except (etree.ParserError, ValueError):
        return None


def _names(element: Any) -> str:
    if not isinstance(element.tag, str):
        return ""
    return f"{element.get('id') or ''} {element.get('class') or ''}".strip()


def _ancestors(element: Any) -> Iterator[Any]:
    while element is not None:
        yield element
        element = element.getparent()
