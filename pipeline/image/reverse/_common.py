"""What the reverse image providers share: key checks and the wrapped HTTP client."""

from __future__ import annotations

from pipeline.errors import SearchError
from pipeline.image.reverse.interface import Carrier, ImageQuery
from pipeline.search.providers._common import KeyedProvider


class KeyedReverseProvider(KeyedProvider):
    """Base of the keyed reverse image providers: the key check and client of search's."""

    settings_group = "REVERSE_IMAGE"
    carriers: tuple[Carrier, ...]

    def carrier(self, query: ImageQuery) -> Carrier:
        """Return how to send query's picture to this provider; raise SearchError if it cannot."""
        for carrier in self.carriers:
            if carrier in query.carriers():
                return carrier
        wants = " or ".join(c.value for c in self.carriers)
        raise SearchError(self.name, f"needs the image by {wants}")
