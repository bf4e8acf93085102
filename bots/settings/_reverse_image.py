"""Reverse image search settings: which providers look a post's pictures up, and how much.

Off unless a provider's key is set. Each provider with a key is asked about every picture a
check reads (by its public URL, or by its bytes when it has none and `upload` is on): the
picture leaves factbot for that third party. See docs/checking/reverse-image.md.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, SecretStr

ReverseProviderName = Literal["serpapi", "vision", "tineye"]


class ReverseImageSettings(BaseModel):
    """Reverse image search (SerpApi Google Lens, Google Cloud Vision, TinEye)."""

    serpapi_api_key: SecretStr | None = Field(
        default=None, description="SerpApi key: Google Lens (sends the image URL only)"
    )
    vision_api_key: SecretStr | None = Field(
        default=None, description="Google Cloud Vision API key (web detection)"
    )
    tineye_api_key: SecretStr | None = Field(default=None, description="TinEye API key")
    serpapi_type: Literal["exact_matches", "visual_matches", "all"] = Field(
        default="exact_matches", description="which Google Lens results SerpApi returns"
    )
    base_urls: dict[ReverseProviderName, str] = Field(
        default_factory=dict,
        description='JSON object overriding provider endpoints, e.g. {"tineye": "https://proxy"}',
    )
    upload: bool = Field(
        default=True,
        description="send the image bytes when it has no public URL (Vision, TinEye)",
    )
    pages_per_image: int = Field(
        default=5, ge=0, le=20, description="matched pages fetched and verified per image"
    )
    results_per_provider: int = Field(
        default=20, ge=1, le=100, description="matches asked of each provider per image"
    )
    budget_per_check: int = Field(
        default=4, ge=1, le=50, description="requests a provider a check (retries count)"
    )
    request_timeout: float = Field(
        default=20.0, gt=0, le=120, description="seconds for one reverse image request"
    )
    connect_timeout: float = Field(
        default=3.0, gt=0, le=60, description="seconds to connect to a provider"
    )
    cache_ttl_hours: float = Field(
        default=72.0, gt=0, description="hours answers are reused (keyed by the image's content)"
    )

    def keyed(self) -> list[ReverseProviderName]:
        """Return the providers whose key is set, in a fixed order."""
        keys: dict[ReverseProviderName, SecretStr | None] = {
            "tineye": self.tineye_api_key,
            "vision": self.vision_api_key,
            "serpapi": self.serpapi_api_key,
        }
        return [name for name, key in keys.items() if key and key.get_secret_value().strip()]
