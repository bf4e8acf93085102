"""Each provider under test: how to build it against a fake API, and its canned answers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pydantic import SecretStr

from pipeline.search.base import SearchProvider
from pipeline.search.http import ProviderClient
from pipeline.search.providers import (
    BingNewsSearch,
    BraveSearch,
    FactCheckSearch,
    GoogleNewsSearch,
    SearxngSearch,
    SerperSearch,
    TavilySearch,
    WikipediaSearch,
)
from tests.pipeline.search.fakeapi import JSON, RSS

BRAVE_KEY = "BSA-brave-secret-4f1c9e"
SERPER_KEY = "serper-secret-83d2aa"
TAVILY_KEY = "tvly-dev-secret-19bc07"
FACTCHECK_KEY = "AIzaFactcheckSecret-5e6f"

EMPTY_RSS = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel>
<generator>NFE/5.0</generator><title>"zzqx nothing" - Google News</title>
<link>https://news.google.com/search?q=zzqx&amp;hl=en-US&amp;gl=US&amp;ceid=US:en</link>
<language>en-US</language><description>Google News</description>
</channel></rss>"""


@dataclass(frozen=True)
class Spec:
    """One provider as the shared tests drive it."""

    name: str
    build: Callable[[ProviderClient, str], SearchProvider]
    fixture: str
    content_type: str
    empty: str
    malformed: str
    key: str | None = None


SPECS = [
    Spec(
        "searxng",
        lambda client, base: SearxngSearch(client, base_url=base),
        "searxng.json",
        JSON,
        '{"query": "zzqx", "number_of_results": 0, "results": [], "answers": [], '
        '"corrections": [], "infoboxes": [], "suggestions": [], "unresponsive_engines": []}',
        '{"query": "zzqx", "results": [',
    ),
    Spec(
        "brave",
        lambda client, base: BraveSearch(client, api_key=SecretStr(BRAVE_KEY), base_url=base),
        "brave.json",
        JSON,
        '{"type": "search", "query": {"original": "zzqx"}, '
        '"mixed": {"type": "mixed", "main": [], "top": [], "side": []}}',
        '{"type": "search", "web": {"results": "not a list"}}',
        BRAVE_KEY,
    ),
    Spec(
        "serper",
        lambda client, base: SerperSearch(client, api_key=SecretStr(SERPER_KEY), base_url=base),
        "serper.json",
        JSON,
        '{"searchParameters": {"q": "zzqx", "type": "search", "engine": "google"}, '
        '"organic": [], "credits": 1}',
        "<html><body>Bad gateway</body></html>",
        SERPER_KEY,
    ),
    Spec(
        "tavily",
        lambda client, base: TavilySearch(client, api_key=SecretStr(TAVILY_KEY), base_url=base),
        "tavily.json",
        JSON,
        '{"query": "zzqx", "answer": null, "images": [], "results": [], "response_time": 0.4}',
        '{"results": [{"title": "no url"}]}',
        TAVILY_KEY,
    ),
    Spec(
        "google_news",
        lambda client, base: GoogleNewsSearch(client, base_url=base),
        "google_news.xml",
        RSS,
        EMPTY_RSS,
        "<rss><channel><item><title>cut off",
    ),
    Spec(
        "bing_news",
        lambda client, base: BingNewsSearch(client, base_url=base),
        "bing_news.xml",
        RSS,
        EMPTY_RSS,
        "<rss><channel><item><title>cut off",
    ),
    Spec(
        "wikipedia",
        lambda client, base: WikipediaSearch(client, base_url=base),
        "wikipedia.json",
        JSON,
        '{"batchcomplete": true, "query": {"searchinfo": {"totalhits": 0}, "search": []}}',
        '{"batchcomplete": true, "query": {"search": [{"ns": 0}]}}',
    ),
    Spec(
        "factcheck",
        lambda client, base: FactCheckSearch(
            client, api_key=SecretStr(FACTCHECK_KEY), base_url=base
        ),
        "factcheck.json",
        JSON,
        "{}",
        "{'claims': []}",
        FACTCHECK_KEY,
    ),
]
