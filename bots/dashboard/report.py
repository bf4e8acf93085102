"""The full report of a check as one HTML page: what platform replies link to.

Replies are short; the report shows everything a reader may want to verify: each claim's
verdict and explanation, the quoted passages, every piece of evidence with its publisher,
credibility tier and date, and the references. The page is the dashboard's `report.html`
template, autoescaped, so everything is escaped. The text of a post that came from a platform
(a Discord or Slack message, maybe from a private channel) is not shown: the report page may
be public, and the claims the reply already quoted are enough. Of its images the page says
sizes, origin and content credentials, never an address, place or camera.
"""

from __future__ import annotations

from bots.dashboard import render_template
from pipeline.records.domain import Check

OWN_PLATFORMS = ("api", "cli", "web")  # posts given to factbot directly

# The dashboard's Content-Security-Policy allows no inline style: the page links its sheet.
STYLESHEET = "/static/report.css"


def report_html(check: Check) -> str:
    """Return the check's report page."""
    refs = {r.number: r for r in check.correction.references}  # one per number, the last
    return render_template(
        "report.html",
        check=check,
        own=check.post.platform in OWN_PLATFORMS,
        references=[refs[n] for n in sorted(refs)],
        seconds=sum(t.seconds for t in check.timings),
        cost=sum(u.cost_usd for u in check.usage),
        stylesheet=STYLESHEET,
    )
