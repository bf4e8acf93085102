"""`bench.x_notes` on a fast subset: notes only on misleading posts, each within X's rules.

The subset spans every kind of the set and four languages; the whole set is the benchmark
(`python -m bench.x_notes`, docs/results/2026-12-08-community-notes.md).
"""

from __future__ import annotations

import pytest

from bench import x_notes

# misleading: a date conflict, a quoted refutation, an English fact-check, es and de
# fact-checks; accurate in en and es; opinions in en and de; a joke; a claim with no evidence
SUBSET = ("1", "10", "12", "17", "25", "33", "41", "45", "52", "54", "60")


@pytest.mark.slow  # the real App over a fresh index: ~25 s here
async def test_notes_only_on_misleading_posts_within_xs_rules() -> None:
    figures = await x_notes.run(ids=SUBSET)
    assert figures["posts"] == len(SUBSET)
    assert figures["notes_by_kind"].keys() <= {"misleading"}, figures["examples"]
    assert figures["notes_by_kind"].get("misleading", 0) >= 4, figures["missed"]
    for rule in ("over_280", "without_url", "url_not_retrieved", "url_not_200"):
        assert figures[rule] == 0, rule
    assert figures["wrong_language"] == 0 and figures["internal_scores"] == 0
    languages = figures["notes_by_language"]
    assert languages.get("es") and languages.get("de"), languages
    # under 50 notes there is no admission standing, whatever the shares
    assert figures["admission"]["state"] == "not enough notes yet"
    assert figures["admission"]["url_validity_high"] == 1.0
