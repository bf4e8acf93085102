"""The five verdicts: their own module so records that `domain` holds can name them too."""

from __future__ import annotations

from enum import StrEnum


class Label(StrEnum):
    """The five verdicts, per claim and for a post as a whole."""

    ACCURATE = "accurate"
    PARTLY_ACCURATE = "partly accurate"
    MISLEADING = "misleading"
    FALSE = "false"
    UNVERIFIABLE = "unverifiable"
