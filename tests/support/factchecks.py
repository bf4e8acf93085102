"""Published fact-checks for tests: the bleach review, and reviews stored as an import does."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from pipeline.embedding.embedder import Embedder
from pipeline.ports import FactCheckIndex
from pipeline.records.domain import Label
from pipeline.records.factchecks import FactCheck

BLEACH = FactCheck(
    url="https://www.politifact.com/factchecks/2020/may/03/viral-image/bleach/",
    claim_reviewed="Drinking bleach cures COVID-19.",
    publisher="PolitiFact",
    publisher_site="politifact.com",
    headline="No, drinking bleach does not cure COVID-19",
    review_date=datetime(2020, 5, 3, tzinfo=UTC),
    language="en",
    rating="Pants on Fire",
    label=Label.FALSE,
)


def store_reviews(
    index: FactCheckIndex, reviews: Sequence[FactCheck], embedders: Sequence[Embedder]
) -> None:
    """Store reviews with a vector of their matching text by each embedder."""
    texts = [r.matching_text() for r in reviews]
    vectors = {e.name: e.embed_sync(texts, role="query") for e in embedders}
    index.upsert_fact_checks(
        [
            (r, f"h{i}", {name: matrix[i] for name, matrix in vectors.items()})
            for i, r in enumerate(reviews)
        ]
    )
