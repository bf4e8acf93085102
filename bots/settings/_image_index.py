"""Settings of the image index (`storage.images`): which pictures are kept for provenance.

The index holds the main images of ingested pages, the declared image of pages web search
fetches, and the images of earlier checks; a post's photo is matched against them.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class ImageIndexSettings(BaseModel):
    """What goes into the image index."""

    page_images: int = Field(
        default=4,
        ge=0,
        le=16,
        description="main images (og:image, content pictures) kept per ingested page; 0 keeps none",
    )
    search_page_images: int = Field(
        default=1,
        ge=0,
        le=4,
        description="images kept per page fetched by web search during a check (its og:image)",
    )
    check_images: bool = Field(
        default=True, description="keep the images of checked posts, to find them reused later"
    )
