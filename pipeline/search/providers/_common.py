"""What the provider modules share: client wrapping, key checks and answer validation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from pipeline.errors import ConfigError, SearchError
from pipeline.search.base import SearchResult
from pipeline.search.http import ProviderClient
from pipeline.search.parsing import parse_date, plain_text

M = TypeVar("M", bound=BaseModel)


class Answer(BaseModel):
    """Base of the providers' answer schemas: unknown fields are ignored, not errors."""

    model_config = ConfigDict(extra="ignore", frozen=True)


def provider_client(
    name: str, client: ProviderClient | httpx.AsyncClient, key: SecretStr | None = None
) -> ProviderClient:
    """Return client as a ProviderClient for name that redacts key."""
    if isinstance(client, ProviderClient):
        client.add_secret(key)
        return client
    return ProviderClient(name, client, secrets=(key,))


def require_key(provider: str, key: SecretStr | None, setting: str) -> SecretStr:
    """Return key, or raise ConfigError saying which setting provides it."""
    if key is None or not key.get_secret_value().strip():
        raise ConfigError(f"the {provider} search provider needs an API key: set {setting}")
    return key


class KeyedProvider:
    """Base of the providers that need an API key: checks it and wraps the client once."""

    name: str  # set by each provider class
    default_url: str
    settings_group = "SEARCH"  # the key's setting: FACTBOT_<group>__<NAME>_API_KEY

    def __init__(
        self,
        client: ProviderClient | httpx.AsyncClient,
        *,
        api_key: SecretStr | None,
        base_url: str | None = None,
    ) -> None:
        setting = f"FACTBOT_{self.settings_group}__{self.name.upper()}_API_KEY"
        self.api_key = require_key(self.name, api_key, setting)
        self.client = provider_client(self.name, client, self.api_key)
        self.base_url = (base_url or self.default_url).rstrip("/")


def validate(model: type[M], data: Any, provider: str) -> M:
    """Return data validated as model; raise SearchError naming the first mismatch."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the top level"
        reason = f"unexpected answer shape at {where}: {first['msg']}"
        raise SearchError(provider, reason) from None


class ContentHit(Answer):
    """A hit with url, title, `content` snippet and a publication date (SearXNG, Tavily)."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    url: str
    title: str = ""
    content: str | None = ""
    published_date: str | None = Field(default=None, alias="publishedDate")


def content_results(provider: str, hits: Sequence[ContentHit], limit: int) -> list[SearchResult]:
    """Return the first `limit` content hits as ranked search results."""
    return [
        SearchResult(
            url=hit.url,
            title=plain_text(hit.title),
            snippet=plain_text(hit.content),
            provider=provider,
            rank=rank,
            published_at=parse_date(hit.published_date),
        )
        for rank, hit in enumerate(hits[:limit], start=1)
    ]
