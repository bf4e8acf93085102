"""The exception tree of factbot.

FactbotError
├── InputError            a post, URL or file the user gave cannot be used (says why)
│   ├── EmptyPostError    nothing check-worthy is left after cleaning
│   ├── UnsafeURLError    a URL is refused by the fetch policy (scheme, address, port)
│   └── FeedError         a ClaimReview feed is not JSON, or ends early (source, item, reason)
├── FetchError            a page could not be fetched (status, size, time, content type)
│   └── RobotsDisallowedError  robots.txt forbids fetching the URL
├── ExtractionError       a fetched page has no usable text (or is a paywall, consent or
│                         bot-protection page: `reason` says which)
├── SearchError           a search provider failed (provider, status, retry_after)
│   └── BudgetExceededError  a provider's per-check budget is spent
├── ImageError            an image cannot be read (not a raster image, too big, corrupt)
├── IngestError           one record of an ingest could not be read (source, line)
├── SourceImportError     a credibility table could not be read
├── ModelError            a language-model call failed (stage, reason)
│   ├── ModelOutputError       invalid output twice (raw kept)
│   └── ModelUnavailableError  the endpoint kept failing (status, retry_after)
├── ModelFetchError       the local model could not be obtained
│   └── ModelChecksumError     its sha256 does not match
├── LocalModelError       the local model server did not start (log tail kept)
├── ConfigError           a setting is missing or invalid (says how to fix it)
│   └── EmbeddingMismatchError  the index's vectors come from another embedding model
└── NotFoundError         a stored record does not exist
"""

from __future__ import annotations


class FactbotError(Exception):
    """Base of every error factbot raises on purpose."""


class InputError(FactbotError):
    """The input cannot be checked."""


class EmptyPostError(InputError):
    """The post has no check-worthy text after removing links, mentions and emojis."""


class UnsafeURLError(InputError):
    """The URL is refused by the fetch policy."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"refused to fetch {url!r}: {reason}")
        self.url = url
        self.reason = reason


class FeedError(InputError):
    """A fact-check feed cannot be read on: not JSON, not a feed, or cut short."""

    def __init__(self, source: str, reason: str, *, items: int = 0) -> None:
        super().__init__(f"{source}: {reason} (after {items} items read)")
        self.source = source
        self.reason = reason
        self.items = items  # the items read (and handed on) before the fault


class FetchError(FactbotError):
    """A page could not be fetched."""

    def __init__(self, url: str, reason: str, *, status: int | None = None) -> None:
        super().__init__(f"could not fetch {url!r}: {reason}")
        self.url = url
        self.reason = reason
        self.status = status


class RobotsDisallowedError(FetchError):
    """robots.txt does not allow factbot to fetch the URL."""


class ExtractionError(FactbotError):
    """A page was fetched but holds no usable main text."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"no usable text in {url!r}: {reason}")
        self.url = url
        self.reason = reason


class SearchError(FactbotError):
    """A search provider answered with an error or an unreadable response."""

    def __init__(
        self,
        provider: str,
        reason: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{provider}: {reason}")
        self.provider = provider
        self.reason = reason
        self.status = status
        self.retry_after = retry_after


class BudgetExceededError(SearchError):
    """The provider's budget of requests for this check is spent."""


class ImageError(FactbotError):
    """An image could not be read; `reason` says why in words a reply can show."""

    def __init__(self, ref: str, reason: str) -> None:
        super().__init__(f"cannot read the image {ref!r}: {reason}")
        self.ref = ref
        self.reason = reason


class IngestError(FactbotError):
    """One record of an ingest source could not be read."""

    def __init__(self, source: str, reason: str, *, line: int | None = None) -> None:
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {reason}")
        self.source = source
        self.line = line
        self.reason = reason


class SourceImportError(FactbotError):
    """A credibility table could not be imported."""


class ConfigError(FactbotError):
    """A setting is missing or invalid."""


class EmbeddingMismatchError(ConfigError):
    """The index holds vectors of one embedding model and the embedder is another."""

    def __init__(self, index_model: str, embedder_model: str) -> None:
        self.index_model = index_model
        self.embedder_model = embedder_model
        onnx = index_model.startswith(("onnx:", "all-MiniLM-L6-v2-onnx"))
        backend = "onnx" if onnx else "torch"
        super().__init__(
            f"the evidence index holds vectors of {index_model!r} but the embedder is "
            f"{embedder_model!r}; mixing them would rank passages wrongly. Either set "
            f"FACTBOT_EMBEDDING__BACKEND={backend} (and FACTBOT_EMBEDDING__MODEL) to the model "
            "of the index, or re-embed the index with the current one: factbot ingest --reembed"
        )


class NotFoundError(FactbotError):
    """A stored record does not exist."""
