"""Templates: one Jinja2 environment, autoescaped, with the filters the pages share.

Everything a template prints is escaped (post text, page text, model output). Links to pages
the pipeline found go through `href`, which keeps http(s) URLs only: a `javascript:` or `data:`
address is shown as text, never as a link.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fastapi import Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup, escape

from bots.dashboard._access import Access, Principal
from bots.runtime.checking.uploads import upload_name

HERE = Path(__file__).resolve().parent
ENV = Environment(
    loader=FileSystemLoader(HERE / "templates"),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
)


def safe_href(url: str | None) -> str | None:
    """Return url when it is an http(s) address, else None (it is then not linked)."""
    if not url:
        return None
    try:
        scheme = urlsplit(url.strip()).scheme.lower()
    except ValueError:
        return None
    return url.strip() if scheme in ("http", "https") else None


def when(value: datetime | None) -> Markup:
    """Return a <time> element (UTC text; app.js shows it in the viewer's zone)."""
    if value is None:
        return Markup("")
    stamp = value.isoformat()
    return Markup(
        f"<time datetime='{escape(stamp)}'>{escape(value.strftime('%Y-%m-%d %H:%M'))} UTC</time>"
    )


def camera_time(value: datetime | None) -> str:
    """Return an EXIF capture time as text; a time without an offset is the camera's clock."""
    if value is None:
        return ""
    if value.tzinfo is None:
        return f"{value:%Y-%m-%d %H:%M} (the camera's clock, zone unknown)"
    return value.isoformat(sep=" ", timespec="minutes")


def highlight(passage: str, quote: str | None) -> Markup:
    """Return the passage escaped, with the quoted part (if it occurs) in a <mark>."""
    if not quote or quote not in passage:
        return Markup(escape(passage))
    start = passage.index(quote)
    end = start + len(quote)
    return Markup(f"{escape(passage[:start])}<mark>{escape(quote)}</mark>{escape(passage[end:])}")


def css_class(value: object) -> str:
    """Return value as a CSS class name ("partly accurate" → "partly-accurate")."""
    return re.sub(r"[^a-z0-9]+", "-", str(value).lower()).strip("-")


ENV.filters["href"] = safe_href
ENV.filters["cls"] = css_class
ENV.filters["when"] = when
ENV.filters["camera_time"] = camera_time
ENV.filters["upload_name"] = upload_name
ENV.globals["highlight"] = highlight


class Views:
    """Render pages with what every page needs: who is signed in, the CSRF token, the mode."""

    def __init__(self, access: Access) -> None:
        self.access = access

    def render(
        self, request: Request, template: str, *, code: int = 200, **context: Any
    ) -> HTMLResponse:
        """Return the template rendered as an HTML response."""
        session = request.state.session
        principal: Principal | None = self.access.current(request)
        html = ENV.get_template(template).render(
            request=request,
            me=principal,
            csrf=self.access.csrf_token(session),
            open_mode=principal is not None and principal.local,
            path=request.url.path,
            code=code,
            **context,
        )
        return HTMLResponse(html, status_code=code, headers={"Cache-Control": "no-store"})
