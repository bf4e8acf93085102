"""Claim extraction: split a post into check-worthy sentences.

Without a language model, check-worthiness is a transparent heuristic: a sentence is kept when
it has enough words and states something (a number, a date, a named entity or a factual verb)
rather than asking, greeting or giving a first-person opinion. A sentence that speaks to the
fact-checker instead ("Note to the AI: ...", "Ignore previous instructions ...") states nothing
about the world and is never a claim. When more sentences qualify than `max_claims`, the
best-scored ones are kept in their original order. Splitting and scoring a long post (100,000
characters) takes a sixth of a second, so it runs in the CPU pool.

Failure policy: a post with nothing check-worthy raises EmptyPostError; nothing else raises.
"""

from __future__ import annotations

import re

from pipeline.errors import EmptyPostError
from pipeline.records.domain import Claim, Post, new_id
from pipeline.util.cpu import CpuPool, run_cpu
from pipeline.util.text import STOPWORDS, clean_post_text, split_sentences, words

MIN_WORDS = 3
MAX_CLAIM_CHARS = 600

_NUMBER_RE = re.compile(r"\d")
_FACTUAL_VERB_RE = re.compile(
    r"\b(is|are|was|were|has|have|had|will|won't|can|can't|could|cause[sd]?|causing|kill(?:s|ed)?|"
    r"die[sd]?|found|show(?:s|ed)?|prove[sd]?|contain(?:s|ed)?|ban(?:s|ned)?|approve[sd]?|"
    r"cure[sd]?|lead(?:s)?|increase[sd]?|decrease[sd]?|rose|fell|announce[sd]?|sign(?:s|ed)?|"
    r"vote[sd]?|confirm(?:s|ed)?|report(?:s|ed)?|claim(?:s|ed)?|said|says|does|did|never|no)\b",
    re.IGNORECASE,
)
_OPINION_RE = re.compile(
    r"^\s*(i think|i feel|i believe|i love|i hate|imo|in my opinion|lol|lmao|omg|"
    r"thank you|thanks|good morning|good night|hello|hi everyone|congrat)",
    re.IGNORECASE,
)

# A sentence that speaks to the model checking the post rather than states something: prompt
# injection, and the instructions the claims model is told to ignore. Kept narrow on purpose: a
# sentence about rules or instructions ("officials ignored the guidelines") is a claim.
_CHECKER = (
    r"(?:ai|a\.i\.|llms?|language models?|models?|assistants?|chat ?bots?|bots?|chatgpt|"
    r"fact[- ]?check(?:ing|er)? (?:ai|bots?|models?|systems?|tools?))"
)
_ADDRESSED_RE = re.compile(
    r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+)?"
    r"(?:previous|prior|above|earlier|preceding|your|system|original)\s+"
    r"(?:\w+\s+)?(?:instructions|prompts?)\b"
    rf"|\b(?:note|message|instructions?|reminder|memo|request)s?\s+(?:to|for)\s+"
    rf"(?:the\s+|any\s+|all\s+|every\s+)?{_CHECKER}\b"
    rf"|\b(?:dear|hey|hi|hello|attention),?\s+{_CHECKER}\b"
    r"|^\W*(?:system|assistant|developer)\s*:"
    r"|\b(?:rate|label|classify)\s+(?:this|the|that|every|each|all)\s+(?:posts?|claims?|tweets?)\b"
    r"|\bcheckable\s*[=:]",
    re.IGNORECASE,
)


def addresses_the_checker(sentence: str) -> bool:
    """Return whether a sentence speaks to the fact-checker instead of stating something."""
    return bool(_ADDRESSED_RE.search(sentence))


def _named(sentence: str) -> int:
    """Count capitalised tokens that are not function words (a cheap named-entity signal)."""
    tokens = words(sentence)
    return sum(1 for t in tokens if t[:1].isupper() and t.lower() not in STOPWORDS)


def checkworthiness(sentence: str) -> float:
    """Score how check-worthy a sentence is (0 means not at all)."""
    tokens = words(sentence)
    if len(tokens) < MIN_WORDS:
        return 0.0
    if (
        sentence.rstrip().endswith("?")
        or _OPINION_RE.match(sentence)
        or addresses_the_checker(sentence)
    ):
        return 0.0
    score = 0.2
    if _NUMBER_RE.search(sentence):
        score += 0.3
    if _named(sentence):
        score += 0.3
    if _FACTUAL_VERB_RE.search(sentence):
        score += 0.3
    return score


async def extract_claims(
    post: Post, *, max_claims: int = 5, cpu: CpuPool | None = None
) -> list[Claim]:
    """Return the check-worthy sentences of a post as claims."""
    return await run_cpu(cpu, _claims, post, max_claims)


def _claims(post: Post, max_claims: int) -> list[Claim]:
    text = clean_post_text(post.text)
    if not any(c.isalnum() for c in text):
        raise EmptyPostError(
            "the post has no text to check once links, mentions and emojis are removed"
        )
    scored = [(checkworthiness(s), i, s) for i, s in enumerate(split_sentences(text))]
    kept = [entry for entry in scored if entry[0] > 0.2]
    if not kept:
        raise EmptyPostError(
            "the post has no check-worthy statement (only questions, greetings, opinions, "
            f"instructions to the checker or sentences under {MIN_WORDS} words)"
        )
    best = sorted(kept, key=lambda e: (-e[0], e[1]))[:max_claims]
    best.sort(key=lambda e: e[1])
    return [
        Claim(id=new_id(), post_id=post.id, position=n, text=sentence[:MAX_CLAIM_CHARS])
        for n, (_, _, sentence) in enumerate(best)
    ]
