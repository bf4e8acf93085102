"""The check-worthiness score of a candidate post: is it worth a check (and its cost)?

    score = 0.55 * claim + 0.20 * reach + 0.15 * engagement + 0.10 * topic      (0 to 1)

- claim: the best sentence's score under the engine's no-model claim heuristic
  (`pipeline.claims.heuristic.checkworthiness`: a number, a named entity, a factual verb; 0 for
  questions, greetings, opinions and text addressed to the checker), divided by its maximum.
  A post with no check-worthy sentence scores 0 whatever its reach: there is nothing to check.
- reach: log(1 + followers) / log(1 + reach_scale), at most 1 (100,000 followers: full).
- engagement: log(1 + likes + reposts + replies) / log(1 + engagement_scale), at most 1.
- topic: 1 when a hashtag or a word of the post is on the operator's topic list, else 0.

A candidate is checked when its score is at least `FACTBOT_MONITOR__THRESHOLD` (0.45 by
default). A claim with a number, a named entity and a factual verb ("Pfizer said 5 million
people died in 2021", claim 1.0) scores 0.55 and passes alone; one with two of the three
("Vaccines cause autism", claim 0.73, score 0.40) needs a listed topic, about ten interactions
or some twenty followers; one with a single signal (claim 0.45, score 0.25) needs real reach
and engagement; chatter, questions and opinions score 0. Logs keep reach and engagement from
drowning the claim: a ten times more followed author adds one step, not ten. What the score
does not see (a post already checked, a near duplicate of one) is settled before it: reuse.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from bots.runtime.monitor.candidates import Candidate
from bots.settings import MonitorSettings
from pipeline.claims.heuristic import checkworthiness
from pipeline.util.text import clean_post_text, split_sentences

WEIGHTS = {"claim": 0.55, "reach": 0.20, "engagement": 0.15, "topic": 0.10}
CLAIM_MAX = 1.1  # checkworthiness of a sentence with a number, a named entity and a factual verb
_WORD_RE = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Score:
    """A candidate's score and its parts (each 0 to 1)."""

    value: float
    claim: float
    reach: float
    engagement: float
    topic: float

    def parts(self) -> dict[str, float]:
        """Return the parts, rounded, to store beside the score."""
        return {
            "claim": round(self.claim, 4),
            "reach": round(self.reach, 4),
            "engagement": round(self.engagement, 4),
            "topic": round(self.topic, 4),
        }


def claim_strength(text: str) -> float:
    """Return how check-worthy the post's best sentence is (0 to 1)."""
    cleaned = clean_post_text(text)
    if not any(c.isalnum() for c in cleaned):
        return 0.0
    best = max((checkworthiness(s) for s in split_sentences(cleaned)), default=0.0)
    return 0.0 if best <= 0.2 else min(1.0, best / CLAIM_MAX)  # 0.2: a sentence with no signal


def log_scaled(value: int, scale: int) -> float:
    """Return log(1 + value) / log(1 + scale), between 0 and 1."""
    if value <= 0:
        return 0.0
    return min(1.0, math.log1p(value) / math.log1p(scale))


def on_topic(candidate: Candidate, topics: Sequence[str]) -> bool:
    """Return whether a hashtag or a word of the post is one of the topics (case-insensitive)."""
    if not topics:
        return False
    wanted = {t.casefold().lstrip("#") for t in topics}
    tags = {t.casefold().lstrip("#") for t in candidate.topics}
    if tags & wanted:
        return True
    text = candidate.post.text.casefold()
    words = set(_WORD_RE.findall(text))
    return any((t in words) if " " not in t else (t in text) for t in wanted)


def score(candidate: Candidate, settings: MonitorSettings) -> Score:
    """Return the check-worthiness score of a candidate (module doc)."""
    claim = claim_strength(candidate.post.text)
    reach = log_scaled(candidate.followers, settings.reach_scale)
    engagement = log_scaled(candidate.engagement, settings.engagement_scale)
    topic = 1.0 if on_topic(candidate, settings.topics) else 0.0
    if claim == 0.0:
        return Score(0.0, 0.0, reach, engagement, topic)
    value = (
        WEIGHTS["claim"] * claim
        + WEIGHTS["reach"] * reach
        + WEIGHTS["engagement"] * engagement
        + WEIGHTS["topic"] * topic
    )
    return Score(round(value, 6), claim, reach, engagement, topic)
