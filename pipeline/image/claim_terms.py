"""How a post's images feed the claims stage: image text read as post text, names as terms.

MUSE's describer makes a post with images a longer post: the text in its images is part of what
it says (a screenshot of a headline is the claim), and the people and places its images show are
searched too, with 5 queries instead of 3.

Failure policy: never raises, except `image_aware`, which re-raises the claims stage's
`EmptyPostError` with what the images gave.
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import replace
from typing import TypeVar

from pipeline.claims.queries import Query
from pipeline.errors import EmptyPostError
from pipeline.records.domain import Claim, Post
from pipeline.records.image import ImageReport
from pipeline.util.text import keywords

T = TypeVar("T")

IMAGE_QUERIES = 5  # MUSE: queries for a post whose images are described (3 for text)


def with_image_text(post: Post, images: ImageReport) -> Post:
    """Return the post with the text read in its images appended: it is checked as post text."""
    if not images.ocr_text:
        return post
    return replace(post, text=f"{post.text}\n\n{images.ocr_text}".strip())


async def image_aware(work: Awaitable[T], images: ImageReport) -> T:
    """Await claim extraction; when it finds nothing, say what the images gave."""
    try:
        return await work
    except EmptyPostError as exc:
        if not images.descriptions and not images.failures:
            raise
        read = (
            f"no check-worthy text was read in its {len(images.descriptions)} image(s)"
            if images.descriptions
            else ""
        )
        raise EmptyPostError(" ".join(filter(None, (str(exc) + ";", read, images.note)))) from exc


def with_terms(query: Query, terms: tuple[str, ...]) -> Query:
    """Return query with the images' names added to its lexical terms."""
    extra = [w for term in terms for w in keywords(term, limit=5)]
    merged = tuple(dict.fromkeys([*query.terms, *(t.replace('"', "") for t in extra)]))[:24]
    return replace(query, terms=merged)


def image_queries(claims: list[Claim], queries: list[Query], images: ImageReport) -> list[Query]:
    """Return the queries of a post with images: names added, up to IMAGE_QUERIES in all.

    The extra queries pair each claim with the names the images show (MUSE searches 5 queries
    for a post with images), so a reused photo's place or people are searched too.
    """
    if not images.descriptions:
        return queries
    queries = [with_terms(q, images.terms) for q in queries]
    for name in images.terms:
        for claim in claims:
            if len(queries) >= IMAGE_QUERIES:
                return queries
            if name.casefold() not in claim.text.casefold():
                text = f"{claim.text} {name}"
                queries.append(
                    Query(claim_id=claim.id, text=text, terms=tuple(keywords(text, limit=20)))
                )
    return queries
