"""A post that asks: the statement an English yes/no question asks about.

"Can masks stop the flu?" asks whether masks can stop the flu: factbot checks "Masks can stop
the flu." rather than dropping the post as having nothing to check. Two shapes are read:

- "Is it true that X?", "Is it really true X?", "Did you know that X?", "True or false: X?"
  -> X;
- an auxiliary before its subject ("Can masks stop the flu?", "Does coffee cause cancer?",
  "Is the Eiffel Tower in Paris?", "Was the Berlin Wall built in 1961?") -> the subject, the
  auxiliary, the rest ("Coffee does cause cancer."). The subject is found by spaCy's English
  parser (the graph stage's, loaded once per process on the first question, 5 s and 50 MB).

A question about the reader or the writer ("Did you see this?", "Can I get a refund?"), an
open question ("Why is nobody talking about this?"), a question about what is yet to happen
("Is it going to rain tomorrow?"; "Will the new law ban cats from flats?" asks what the law
says, and is read) and a question in another language are
not statements about the world that evidence can check: they stay unchecked.

Failure policy: `statement` returns None for anything it cannot turn into a statement,
including when the parser is not installed; it never raises.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from pipeline.errors import ConfigError

log = logging.getLogger(__name__)

_WRAPPED = re.compile(
    r"^\s*(?:is\s+it\s+(?:really\s+|actually\s+)?true\s+(?:that\s+)?|did\s+you\s+know\s+"
    r"(?:that\s+)?|true\s+or\s+false\s*[:,-]?\s*|is\s+it\s+(?:a\s+)?fact\s+that\s+)(?P<rest>.+?)"
    r"\s*\?+\s*$",
    re.IGNORECASE,
)
_AUX = (
    "can could will would should may might must do does did is are was were has have had"
).split()
_ASKED = re.compile(rf"^\s*(?:{'|'.join(_AUX)})\b(?P<rest>.+?)\s*\?+\s*$", re.IGNORECASE)
# A question about what is yet to happen asks for a prediction, which no evidence can check yet.
_FUTURE = re.compile(
    r"\b(?:going\s+to|gonna|tomorrow|tonight|next\s+(?:week|month|year))\b",
    re.IGNORECASE,
)
# Subjects that make the question about the people talking, not about the world.
_PERSONAL = frozenset("i you we me us u ya y'all".split())
MIN_WORDS = 3
_HEADS = frozenset({"NOUN", "PROPN", "PRON", "NUM"})
_DETERMINERS = frozenset("the a an this that these those my your his her its our their".split())


def _sentence(text: str) -> str:
    text = text.strip().rstrip("?").strip()
    return f"{text[:1].upper()}{text[1:]}." if text else ""


def _parser() -> Any | None:
    from pipeline.graph.build import SPACY_MODEL, load_pipeline

    try:
        return load_pipeline(SPACY_MODEL)
    except ConfigError:
        log.warning("questions are not read as statements: the spaCy model is not installed")
        return None


def _inverted(question: str) -> str | None:
    """Return "the subject, the auxiliary, the rest" of an inverted yes/no question.

    The parser reads questions poorly, statements well: the auxiliary is put after each
    possible subject in turn ("the Titanic did sink …"), and the first statement whose parse
    has a subject spanning exactly the words before the auxiliary wins.
    """
    nlp = _parser()
    if nlp is None:
        return None
    words = question.strip().rstrip("?").split()
    if len(words) < MIN_WORDS:
        return None
    aux, rest = words[0].lower(), words[1:]
    for k in range(1, len(rest)):
        subject = rest[:k]
        if k == 1 and subject[0].lower() in _PERSONAL:
            return None  # a question about the people talking
        candidate = [*subject, aux, *rest[k:]]
        doc = nlp(" ".join(candidate))
        if len(doc) != len(candidate):
            continue  # the tokenizer split a word: positions no longer line up
        verb = doc[k]
        head = verb if verb.dep_ == "ROOT" else verb.head
        found = [t for t in head.children if t.dep_ in ("nsubj", "nsubjpass", "expl")]
        if not found or verb.dep_ not in ("ROOT", "aux", "auxpass"):
            continue
        span = (found[0].left_edge.i, found[0].right_edge.i + 1)
        # an English subject ends on its head noun ("the new law", not "the new")
        head_word = subject[-1].lower()
        if rest[k][:1].isupper() and subject[-1][:1].isupper():
            continue  # never inside a name ("the Eiffel | Tower")
        if head_word in _DETERMINERS or doc[k - 1].pos_ not in _HEADS:
            continue
        if span == (0, k) and found[0].i == k - 1:
            first = subject[0]
            if not (len(first) > 1 and first[1:2].isupper()) and doc[0].pos_ != "PROPN":
                first = first[:1].lower() + first[1:]
            return _sentence(" ".join([first, *subject[1:], aux, *rest[k:]]))
    return None


def statement(sentence: str) -> str | None:
    """Return the statement an English yes/no question asks about, or None."""
    text = sentence.strip()
    if not text.endswith(("?", "？")):
        return None
    text = text.rstrip("？")
    wrapped = _WRAPPED.match(text)
    if wrapped:
        rest = wrapped.group("rest")
        return _sentence(rest) if len(rest.split()) >= MIN_WORDS else None
    if not _ASKED.match(text) or _FUTURE.search(text):
        return None
    try:
        return _inverted(text)
    except Exception:  # the parser's failure on odd text: the question stays unchecked
        log.exception("a question could not be read as a statement")
        return None
