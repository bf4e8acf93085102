"""'factbot could not search' is never 'searched and found nothing credible', in every rendering."""

from __future__ import annotations

from pipeline.records.domain import Claim, ClaimVerdict, Label, Verdict
from pipeline.records.search_status import LiveSearch, ProviderStatus, SearchStatus
from pipeline.reply.render import render_json, render_markdown, render_plain
from pipeline.reply.writer import BLIND_ITEM, write_correction

CLAIM = Claim(id="c1", post_id="p1", position=0, text="5G towers spread COVID-19.")
VERDICT = Verdict(
    label=Label.UNVERIFIABLE,
    claims=(ClaimVerdict(claim_id="c1", label=Label.UNVERIFIABLE, rationale="no evidence"),),
)
DOWN = (
    ProviderStatus("wikipedia", False, "network error: ConnectError: [Errno 111] refused", 0.01),
    ProviderStatus("google_news", False, "no answer within 3 s (ReadTimeout)", 3.0),
)


async def test_no_source_reachable_says_factbot_could_not_search() -> None:
    sources = SearchStatus(live=LiveSearch.UNREACHABLE, providers=DOWN, local_documents=0)
    correction = await write_correction([CLAIM], VERDICT, [], sources=sources)
    assert correction.headline.startswith(
        "factbot could not search: its local evidence index is empty and live search was "
        "unreachable (wikipedia: network error; google_news: no answer within 3 s (ReadTimeout))."
    )
    assert "says nothing about whether the post is accurate" in correction.headline
    assert correction.could_not_search.startswith("its local evidence index is empty")
    assert correction.items[0].explanation == BLIND_ITEM
    plain = render_plain(correction, budget=None)
    markdown = render_markdown(correction, budget=None)
    for text in (correction.text, plain, markdown):
        assert "could not search" in text and "No credible evidence" not in text
        assert "[Errno" not in text  # operators read the full reasons in the check, not users
    body = render_json(correction)
    assert body["could_not_search"] == correction.could_not_search
    assert body["items"][0]["explanation"] == BLIND_ITEM


async def test_search_off_with_an_empty_index_names_the_off_switch() -> None:
    sources = SearchStatus(
        local_documents=0, off_reason="turned off by FACTBOT_SEARCH__ENABLED=false"
    )
    correction = await write_correction([CLAIM], VERDICT, [], sources=sources)
    assert correction.headline.startswith(
        "factbot could not search: its local evidence index is empty and live search is off "
        "(turned off by FACTBOT_SEARCH__ENABLED=false)."
    )


async def test_searched_and_found_nothing_keeps_the_ordinary_text() -> None:
    sources = SearchStatus(live=LiveSearch.OFF, local_documents=120)
    correction = await write_correction([CLAIM], VERDICT, [], sources=sources)
    assert correction.headline.startswith("This post is unverifiable with the credible evidence")
    assert correction.items[0].explanation == "No credible evidence about it was found."
    assert correction.could_not_search == "" and render_json(correction)["could_not_search"] is None
    assert "could not search" not in render_plain(correction, budget=None)


async def test_an_unreachable_live_search_beside_an_index_is_a_note_not_the_verdict() -> None:
    sources = SearchStatus(live=LiveSearch.UNREACHABLE, providers=DOWN, local_documents=120)
    correction = await write_correction([CLAIM], VERDICT, [], sources=sources)
    assert correction.headline.startswith("This post is unverifiable")
    assert correction.note == (
        "(Live search was unreachable (wikipedia: network error; google_news: no answer within "
        "3 s (ReadTimeout)).)"
    )
    assert correction.could_not_search == ""


def test_the_status_combines_the_probe_with_what_the_searches_did() -> None:
    start = SearchStatus(
        live=LiveSearch.OK,
        providers=(ProviderStatus("wikipedia", True), ProviderStatus("google_news", True)),
        local_documents=0,
    )
    after = start.after(
        [
            ("wikipedia", False, "HTTP 503: Service Unavailable", 0.2),
            ("google_news", True, "", 0.1),
            ("wikipedia", False, "network error: ReadError", 0.4),
        ]
    )
    assert after.live is LiveSearch.PARTIAL and not after.blind
    assert after.failures() == (
        ProviderStatus("wikipedia", False, "network error: ReadError", 0.4),
    )
    none = start.after([("wikipedia", False, "x", 0.1), ("google_news", False, "y", 0.1)])
    assert none.live is LiveSearch.UNREACHABLE and none.blind
    assert SearchStatus.from_json(after.to_json()) == after
    assert SearchStatus.from_json({}) == SearchStatus()  # a check stored before the column
