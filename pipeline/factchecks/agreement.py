"""Whether a post's claim and a fact-check's reviewed claim say the same thing, beyond similarity.

A wrong match (a fact-check of a different claim cited as if it rated this one) is worse than no
match, and embeddings place "X won the 2020 election" next to "X lost the 2020 election". So a
match the re-ranker scores high is still refused when the two texts disagree on:
- negation: one is negated and the other is not ("vaccines do not cause autism"), counting
  only negations near a word both share;
- direction: one says the opposite of the other with a word of an antonym pair (won/lost,
  rise/fall, more/less, alive/dead; English, Spanish, French, German, Portuguese);
- numbers: both give numbers and share none (percentages and amounts, not list markers);
- years: both name years and share none (a 2016 claim is not a 2020 one).
Names are left to the re-ranker's lexical score: a post names people by handle, nickname or
title that the review spells out, so a missing name is weak evidence of a different claim.

Failure policy: pure functions over text; never raise.
"""

from __future__ import annotations

import re

from pipeline.util.text import ALL_STOPWORDS, words

# French "ne ... pas" is one negation: only its second word counts.
_NEGATIONS = frozenset(
    """no not never none nobody nothing neither nor without cannot isn't aren't wasn't weren't
    doesn't don't didn't won't can't hasn't haven't hadn't shouldn't wouldn't couldn't n't
    nunca jamás ningún ninguna pas jamais aucun aucune nicht kein keine keinen keiner niemals
    nie não nem nenhum nenhuma""".split()
)
# Pairs of words whose swap reverses a claim; each side lists its inflections (stems as words).
_ANTONYMS: tuple[tuple[frozenset[str], frozenset[str]], ...] = tuple(
    (frozenset(a.split()), frozenset(b.split()))
    for a, b in (
        ("won win wins winning victory", "lost lose loses losing defeat defeated"),
        (
            "rise rises rising rose increase increased increases higher up",
            "fall falls falling fell decrease decreased decreases lower down drop dropped",
        ),
        ("more most", "less fewer least"),
        ("alive survived survives", "dead died dies killed"),
        ("legal legalised legalized allowed allows allow", "illegal banned bans ban outlawed"),
        ("true real genuine authentic", "fake hoax false fabricated"),
        ("ganó gana victoria", "perdió pierde derrota"),
        ("aumentó aumenta subió sube", "disminuyó disminuye bajó baja"),
        ("vivo viva", "muerto muerta murió"),
        ("gagné gagne", "perdu perd"),
        ("gewonnen gewinnt", "verloren verliert"),
        ("venceu ganhou", "perdeu"),
    )
)
_NUMBER_RE = re.compile(
    r"(?<![\w.])(\d{1,3}(?:[,.]\d{3})+|\d+(?:[.,]\d+)?)"
    r"(\s?%|\s?percent|\s?(?:thousand|million|billion|trillion|mil|millones|milliards?|milliarden))?",
    re.IGNORECASE,
)
_YEAR_RE = re.compile(r"(?<!\d)(1[89]\d\d|20\d\d)(?!\d)")


NEGATION = "negation differs"  # a reason the matcher may lift (`matching.FactCheckMatcher`)
NEGATION_REACH = 4  # a negation bears on the words up to this many tokens either side of it


def _negated(tokens: list[str], shared: set[str]) -> bool:
    """Return whether the words both texts share are negated an odd number of times.

    Only a negation within `NEGATION_REACH` tokens of a shared content word counts (either side:
    French puts "pas" after the verb it negates): a post
    of several sentences says "not" about other things ("... and no water, not even a toilet")
    without negating the claim it repeats.
    """
    count = 0
    for i, token in enumerate(tokens):
        if token in _NEGATIONS or token.endswith(("n't", "n’t")):
            near = tokens[max(0, i - NEGATION_REACH) : i + 1 + NEGATION_REACH]
            if any(t in shared for t in near):
                count += 1
    return count % 2 == 1


def _numbers(text: str) -> set[str]:
    """Return the numbers of text other than years, without thousands separators."""
    years = set(_YEAR_RE.findall(text))
    found = set()
    for value, magnitude in _NUMBER_RE.findall(text):
        plain = value.replace(",", "") if re.fullmatch(r"\d{1,3}(,\d{3})+", value) else value
        plain = plain.replace(",", ".")
        if plain in years or (len(plain) == 1 and not magnitude):  # "1 of 3", "5G": too weak
            # (a single digit with a magnitude or a percent sign is a figure: "3 billion")
            continue
        found.add(plain.rstrip("0").rstrip(".") if "." in plain else plain)
    return found


def disagreements(claim: str, reviewed: str, context: str = "") -> tuple[str, ...]:
    """Return why claim and reviewed are not the same claim (empty: nothing found against it).

    `context` (the review's headline) gives the numbers and years where the reviewed claim has
    none, never negations: a headline such as "No, the bridge did not cost $10 billion" negates
    the claim it reviews, and "The tower is 330 metres, not 500" states the correction.
    """
    claim_tokens = [w.lower() for w in words(claim)]
    review_tokens = [w.lower() for w in words(reviewed)]
    reasons: list[str] = []
    mine, theirs = set(claim_tokens), set(review_tokens)
    shared = {t for t in mine & theirs if len(t) > 2 and t not in ALL_STOPWORDS}
    if _negated(claim_tokens, shared) != _negated(review_tokens, shared):
        reasons.append(NEGATION)
    for left, right in _ANTONYMS:
        if (mine & left and theirs & right and not theirs & left) or (
            mine & right and theirs & left and not theirs & right
        ):
            reasons.append("opposite direction")
            break
    # The headline counts only where the reviewed claim has no figure of its own: a headline
    # often states the correction ("The tower is 330 metres, not 500" reviews "… 500 metres"),
    # and the post repeating the true figure is not the claim rated.
    claim_numbers = _numbers(claim)
    review_numbers = _numbers(reviewed) or _numbers(context)
    if claim_numbers and review_numbers and not claim_numbers & review_numbers:
        reasons.append("numbers differ")
    claim_years = set(_YEAR_RE.findall(claim))
    review_years = set(_YEAR_RE.findall(reviewed)) or set(_YEAR_RE.findall(context))
    if claim_years and review_years and not claim_years & review_years:
        reasons.append("years differ")
    return tuple(reasons)
