"""One module per search provider, each a `SearchProvider` over a `ProviderClient`."""

from pipeline.search.providers.bing_news import BingNewsSearch
from pipeline.search.providers.brave import BraveSearch
from pipeline.search.providers.factcheck import FactCheckSearch
from pipeline.search.providers.google_news import GoogleNewsSearch
from pipeline.search.providers.searxng import SearxngSearch
from pipeline.search.providers.serper import SerperSearch
from pipeline.search.providers.tavily import TavilySearch
from pipeline.search.providers.wikipedia import WikipediaSearch

__all__ = [
    "BingNewsSearch",
    "BraveSearch",
    "FactCheckSearch",
    "GoogleNewsSearch",
    "SearxngSearch",
    "SerperSearch",
    "TavilySearch",
    "WikipediaSearch",
]
