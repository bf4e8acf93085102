"""What the reverse image providers share: key checks and the wrapped HTTP client."""

from __future__ import annotations

import httpx
from pydantic import SecretStr

from pipeline.errors import SearchError
from pipeline.image.reverse.base import Carrier, ImageQuery
from pipeline.search.http import ProviderClient
from pipeline.search.providers._common import provider_client, require_key


class KeyedReverseProvider:
    """Base of the keyed reverse image providers: checks the key and wraps the client once."""

    name: str  # set by each provider class
    default_url: str
    carriers: tuple[Carrier, ...]

    def __init__(
        self,
        client: ProviderClient | httpx.AsyncClient,
        *,
        api_key: SecretStr | None,
        base_url: str | None = None,
    ) -> None:
        setting = f"FACTBOT_REVERSE_IMAGE__{self.name.upper()}_API_KEY"
        self.api_key = require_key(self.name, api_key, setting)
        self.client = provider_client(self.name, client, self.api_key)
        self.base_url = (base_url or self.default_url).rstrip("/")

    def carrier(self, query: ImageQuery) -> Carrier:
        """Return how to send query's picture to this provider; raise SearchError if it cannot."""
        for carrier in self.carriers:
            if carrier in query.carriers():
                return carrier
        wants = " or ".join(c.value for c in self.carriers)
        raise SearchError(self.name, f"needs the image by {wants}")
