"""The full report of a check as one HTML page: what platform replies link to.

Replies are short; the report shows everything a reader may want to verify: each claim's
verdict and explanation, the quoted passages, every piece of evidence with its publisher,
credibility tier and date, and the references. Everything is escaped. The text of a post
that came from a platform (a Discord or Slack message, maybe from a private channel) is not
shown: the report page may be public, and the claims the reply already quoted are enough.
(The dashboard issue builds the full web interface; this page is its smallest part.)
"""

from __future__ import annotations

from html import escape

from pipeline.records.domain import Check
from pipeline.records.image import ImageDescription

OWN_PLATFORMS = ("api", "cli", "web")  # posts given to factbot directly

# The dashboard's Content-Security-Policy allows no inline style: the page links its sheet.
STYLESHEET = "/static/report.css"


def _link(url: str, text: str) -> str:
    """Return an http(s) URL as a link, anything else (javascript:, data:) as plain text."""
    scheme = url.strip().split(":", 1)[0].lower() if ":" in url else ""
    if scheme not in ("http", "https"):
        return escape(text)
    return f"<a href='{escape(url.strip(), quote=True)}' rel='noopener nofollow'>{escape(text)}</a>"


def _image_facts(d: ImageDescription, *, own: bool) -> list[str]:
    """Return what the report says of one image: never its address, place or camera.

    Text read in the image and its caption are post content: shown only for posts given to
    factbot directly, like the post's own text.
    """
    facts = [f"{d.width}×{d.height} {escape(d.origin.value)}"]
    if own and d.ocr is not None and d.ocr.text.strip():
        facts.append(f"text read in it: “{escape(' '.join(d.ocr.text.split())[:600])}”")
    if own and d.caption is not None:
        facts.append(f"what it shows: {escape(d.caption.text[:300])}")
    exif = d.metadata.exif
    if own and exif is not None and exif.captured_at is not None:
        facts.append(f"taken {exif.captured_at:%Y-%m-%d} (camera metadata)")
    cred = d.metadata.credentials
    if cred is None:
        facts.append("no content credentials")
    else:
        state = "valid" if cred.valid else "not valid"
        made = "marked as made by AI" if cred.ai_generated else "not marked as AI-made"
        facts.append(
            f"content credentials signed by {escape(cred.signer or 'an unnamed signer')} "
            f"({state}), {made}"
        )
    return facts


def _images(check: Check) -> list[str]:
    report = check.images
    if not report.descriptions and not report.failures:
        return []
    own = check.post.platform in OWN_PLATFORMS
    parts = ["<h2>Images</h2><ul class='images'>"]
    for n, d in enumerate(report.descriptions, 1):
        parts.append(f"<li>Image {n}: {' · '.join(_image_facts(d, own=own))}</li>")
    for f in report.failures:
        parts.append(f"<li>An image could not be read: {escape(f.reason)}</li>")
    parts.append("</ul>")
    return parts


def report_html(check: Check) -> str:
    """Return the check's report page."""
    c = check.correction
    refs = {r.number: r for r in c.references}
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width,initial-scale=1'>",
        "<meta name='robots' content='noindex'>",
        f"<title>factbot check — {escape(c.label.value)}</title>",
        f"<link rel='stylesheet' href='{STYLESHEET}'></head>",
        f"<body><h1>{escape(c.headline)}</h1>",
        f"<p class='meta'>Verdict: <span class='label'>{escape(check.verdict.label.value)}"
        f"</span> · judge: {escape(check.judge)} · checked {check.created_at:%Y-%m-%d %H:%M} UTC",
    ]
    if check.before is not None:
        parts.append(f" · evidence published before {check.before:%Y-%m-%d}")
    parts.append("</p>")
    if check.post.platform in OWN_PLATFORMS and check.post.text:
        parts.append(f"<h2>The post</h2><blockquote>{escape(check.post.text[:4000])}</blockquote>")
    parts += _images(check)
    if c.items:
        parts.append("<h2>Claims</h2><ol>")
        for item in c.items:
            marks = " ".join(f"<a href='#ref{n}'>[{n}]</a>" for n in item.references)
            parts.append(
                f"<li><p><span class='label'>{escape(item.label.value)}</span> "
                f"“{escape(item.claim)}”</p><p>{escape(item.explanation)} {marks}</p>"
            )
            if item.quote is not None:
                parts.append(
                    f"<blockquote>{escape(item.quote.text)} "
                    f"<a href='#ref{item.quote.reference}'>[{item.quote.reference}]</a>"
                    "</blockquote>"
                )
            parts.append("</li>")
        parts.append("</ol>")
    if c.note:
        parts.append(f"<p>{escape(c.note)}</p>")
    if refs:
        parts.append("<h2>References</h2><ol>")
        for n in sorted(refs):
            r = refs[n]
            parts.append(f"<li id='ref{n}'>{_link(r.url, r.title or r.url)}</li>")
        parts.append("</ol>")
    if check.evidence:
        parts.append("<h2>Evidence considered</h2><ul>")
        for e in check.evidence:
            date = f", {e.document.published_at:%Y-%m-%d}" if e.document.published_at else ""
            parts.append(
                f"<li><p class='meta'>{escape(e.document.domain)} · {escape(e.tier.value)}{date}"
                f" · {escape(e.stance.value)}</p><blockquote>{escape(e.passage.text[:1200])}"
                "</blockquote></li>"
            )
        parts.append("</ul>")
    total = sum(t.seconds for t in check.timings)
    cost = sum(u.cost_usd for u in check.usage)
    parts.append(
        f"<p class='meta'>{total:.1f} s · model cost ${cost:.4f} · check {escape(check.id)}</p>"
    )
    parts.append("</body></html>")
    return "".join(parts)
