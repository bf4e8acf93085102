"""`bench.x_notes` on a fast subset: notes only on misleading posts, each within X's rules.

The subset spans every kind of the set and four languages; the whole set is the benchmark
(`python -m bench.x_notes`, docs/results/2026-12-08-community-notes.md).
"""

from __future__ import annotations

import pytest

from bench import x_notes

# misleading: a date conflict, a quoted refutation, an English fact-check, es, de and it
# fact-checks; accurate in en and es; opinions in en, de and ru; a joke; a claim with no evidence
SUBSET = ("1", "10", "12", "17", "25", "102", "33", "41", "45", "52", "118", "54", "60")


@pytest.mark.slow  # the real App over a fresh index: ~30 s here
async def test_notes_only_on_misleading_posts_within_xs_rules() -> None:
    figures = await x_notes.run(ids=SUBSET)
    assert figures["posts"] == len(SUBSET)
    assert figures["notes_by_kind"].keys() <= {"misleading"}, figures["examples"]
    assert figures["notes_by_kind"].get("misleading", 0) >= 5, figures["missed"]
    for rule in ("over_280", "without_url", "url_not_retrieved", "url_not_200"):
        assert figures[rule] == 0, rule
    assert figures["wrong_language"] == 0 and figures["internal_scores"] == 0
    # the note's words read as the post's language (an Italian note was English text)
    assert figures["text_not_in_post_language"] == [], figures["examples"]
    languages = figures["notes_by_language"]
    assert languages.get("es") and languages.get("de") and languages.get("it"), languages
    # under 50 notes there is no admission standing, whatever the shares
    assert figures["admission"]["state"] == "not enough notes yet"
    assert figures["admission"]["url_validity_high"] == 1.0


def _outcome(n: int, abuse: str = "high") -> x_notes.Outcome:
    note = {
        "text": "Checked and rated false. https://a.example/x",
        "chars": 48,
        "urls": ["https://a.example/x"],
        "retrieved": True,
        "url_statuses": {"https://a.example/x": 200},
        "language": "en",
        "text_language": "en",
        "buckets": {"ClaimOpinion": "high", "UrlValidity": "high", "HarassmentAbuse": abuse},
        "passes": abuse == "high",
    }
    post = {"id": str(n), "lang": "en", "kind": "misleading", "text": "x"}
    return x_notes.Outcome(post, "write", "a fact-check correction", note)


def test_the_standing_is_read_over_the_last_fifty_notes_and_none_below() -> None:
    # the first note of 51 is low on HarassmentAbuse: out of the last 50, and withheld
    figures = x_notes.figures([_outcome(0, abuse="low"), *(_outcome(n) for n in range(1, 51))])
    admission = figures["admission"]
    assert (admission["state"], admission["notes"]) == ("meets admission", 50)
    assert admission["harassment_abuse_high"] == 1.0
    assert admission["at_49_notes"]["state"] == "not enough notes yet"
    assert admission["over_notes_written"]["harassment_abuse_high"] == round(50 / 51, 4)
    assert [w["id"] for w in figures["withheld_by_local_scores"]] == ["0"]
    below = x_notes.figures([_outcome(n) for n in range(49)])["admission"]
    assert below["state"] == "not enough notes yet" and below["meets"] is False
