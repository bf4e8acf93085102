"""Debunking frames, read in code: a sentence that repeats a claim in order to call it false.

Fact-checkers repeat the claim they debunk: "The claim that X is false", "Myth: X. Fact: …",
"X? Our verdict: false", "There is no evidence that X", "X has been debunked". A cross-encoder
reads the repeated words as support, or as not much either way (the shipped stance model read
"The claim that X is false, fact-checkers found." as a refutation for 43 % of 300 claims,
`python -m bench.restatement`). This module reads such frames in code, so that a page which
calls a claim false is never read as support for it, whatever a model makes of it:

- a sentence **restates** the claim when it holds at least `COVERAGE` of the claim's content
  words (two at least; a word matches another with the same first five letters, numbers only
  exactly) with the same polarity (as many negations, counted outside the cue, modulo two);
- a **debunking cue** is in that sentence ("is false", "a hoax", "a myth", "has been debunked",
  "no evidence", "conspiracy theory", "falsely", "Myth:", "Verdict: false", and the common
  Spanish, Portuguese, French, German and Italian forms), or in the sentence after it when the
  restatement is a question or labelled "Claim:"; a question that restates the claim answered
  "No." is a debunk too ("Did X? No. …", as myth-busters and question-and-answer pages write);
- nothing is read when the claim itself carries a cue (a claim *about* a debunk: "fact-checkers
  said the photo was fake" is supported by a page saying so), when the cue is negated ("is not
  false", "not a hoax"), or when the polarities differ ("the claim that X is *not* true is
  false" is no refutation of X).

A second frame is read the same way: **roles reversed** (`reversed_roles`), a sentence about the
same event (the claim's other content words at `COVERAGE`, its numbers exactly) that names the
claim's winner as the loser, or its loser as the winner ("Naomi Osaka defeated Serena Williams
in the 2018 US Open final" against "Serena Williams won the 2018 US Open final"): the model read
the shared words as support.

A third frame only takes support away: a sentence that **reports** the claim (`reported`): it
restates the claim with a cue of hearsay ("A widely shared video says that X", "Posts claim
X", "Readers asked whether X", "X, a message forwarded on WhatsApp says"; not a named source:
"X, according to public health agencies" states it) and nothing in the
passage states it without one. Such a page says that someone said X, not that X is so: its
support is taken away (its refutation, if any, stays). On the web-evidence bench's calibration
half (`python -m bench.web_evidence --half calibration`) the stance model read "A widely
shared video says that eating garlic every day cures high blood pressure." as support 0.98.

A fourth reading weighs what the model offers (`contradicted`): a passage read as support
whose other sentence the model reads as contradicting the claim keeps that refutation where the
sentence holds `AGAINST_COVERAGE` of the claim's content words, so the page is contested, not an
endorsement ("The liner that sank in 1915 was the Lusitania." beside "The Titanic went down on
its maiden voyage in April 1912." for "The Titanic sank in 1915.", the web-evidence bench).

A debunking frame found makes the passage a refutation of at least `FRAME_REFUTES` and takes
its support away (`reread`): the words were repeated to be denied. It never adds support, so it
cannot make a claim `accurate`. The model's own reading stands wherever no frame is found.

Measured on AVeriTeC *train* gold evidence (3,068 claims; not the data reported on; its evidence
is written as questions and answers): debunking frames found for 99 claims, 94 of them gold
`false`, 3 `misleading`, 2 `unverifiable`, none `accurate`. Roles reversed: none. Tried and
dropped: a question restating the claim answered "Yes." as support (66 claims there, 39 of them
`accurate`: a yes to the question is not a yes to the whole claim); a
sentence that restates the claim with another number, year or name in its place fired for as
many true claims as false ones there
(names 18 % of true against 14 % of false, quantities 3.5 % against 2.2 %, years 0.6 % against
0.3 %): approximate numbers and other names for the same thing are the rule in real evidence.

Failure policy: pure code on text; never raises.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import regex

from pipeline.util.text import ALL_STOPWORDS, QUESTION_MARKS, keywords, sentence_spans
from pipeline.verifier.stance import REFUTES, PassageStance, StanceModel

COVERAGE = 0.6  # share of the claim's content words a restating sentence must hold
FRAME_REFUTES = 0.9  # the refutation a debunking frame counts as (at least)
# a passage's contradicting sentence counts when it holds this share of the claim's content
# words (`contradicted`): the bearing rule's coverage for passages (`Thresholds.coverage`)
AGAINST_COVERAGE = 0.5
_PREFIX = 5  # letters two words must share to match ("landing" ~ "landings")

_ADVERB = (
    r"(?:(?:completely|entirely|totally|simply|also|still|largely|mostly|patently|clearly)\s+)?"
)
_BE = r"(?:is|are|was|were|be|been|being|'s|remains?)"
_FALSE_NOUN = (
    r"(?:a\s+|an\s+)?(?:hoax|myth|lie|falsehood|fabrication|conspiracy\s+theor(?:y|ies)|"
    r"fake(?:\s+news)?|misinformation|disinformation|urban\s+legend)"
)
_CUES = regex.compile(
    r"|".join(
        [
            rf"\b{_BE}\s+{_ADVERB}(?:false|untrue|fake|fabricated|bogus|baseless|unfounded|"
            rf"incorrect|wrong|{_FALSE_NOUN})\b",
            rf"\b{_BE}\s+{_ADVERB}not\s+(?:true|correct|accurate|the\s+case|real)\b",
            r"\bisn['’]t\s+(?:true|correct|accurate|the\s+case|real)\b",
            r"\b(?:has|have|had)\s+been\s+(?:repeatedly\s+|widely\s+)?(?:debunked|disproven|"
            r"disproved|refuted|discredited)\b",
            r"\b(?:debunk(?:ed|s|ing)?|disproven|discredited)\b",
            r"\bno\s+(?:scientific\s+|credible\s+)?(?:evidence|proof|truth|basis)\b",
            r"\bwithout\s+(?:any\s+)?evidence\b",
            r"\b(?:hoax|myth|conspiracy\s+theor(?:y|ies)|falsehood|misinformation|"
            r"disinformation|urban\s+legend)s?\b",
            r"\bfalse(?:ly)?\b(?!\s+(?:positive|negative|alarm|start|teeth|ceiling|bottom))",
            r"\b(?:verdict|rating|ruling|our\s+ruling|conclusion)\s*[:：-]\s*(?:mostly\s+)?"
            r"(?:false|fake|incorrect|pants\s+on\s+fire|four\s+pinocchios)\b",
            # es, pt, fr, de, it
            r"\b(?:es|son|era|fue|é|são|foi|est|sont|était|ist|sind|war|è|sono)\s+"
            r"(?:falso|falsa|falsos|falsas|faux|fausse|fausses|falsch|mentira|un\s+bulo|"
            r"um\s+boato|une\s+intox|erfunden|frei\s+erfunden)\b",
            r"\b(?:bulo|boato|infox|intox|falschmeldung|desinformaci[oó]n|desinforma[cç][aã]o|"
            r"d[ée]sinformation|mito|mythe|mythos|fake\s+news)\b",
            r"\b(?:no\s+es\s+(?:cierto|verdad)|n[aã]o\s+[ée]\s+verdade|c['’]est\s+faux|"
            r"stimmt\s+nicht|non\s+[èe]\s+vero)\b",
        ]
    ),
    regex.IGNORECASE,
)
# A label that debunks what follows it on its own ("Myth: X.", "Fake: X").
_LABEL = regex.compile(
    r"^\W*(?:myth|fake|false|fiction|hoax|mito|bulo|falso|faux|mythe|falsch)\s*[:：—–-]\s",
    regex.IGNORECASE,
)
# A label that only announces the claim, whose rating follows ("Claim: X. Rating: False").
_CLAIM_LABEL = regex.compile(
    r"^\W*(?:claim|the\s+claim|rumou?r|what\s+was\s+claimed)\s*[:：]\s", regex.IGNORECASE
)
# The answer to a question that restates the claim: "Did X? No." ("No, but …" is no answer.)
_ANSWERED_NO = regex.compile(
    r"^\W*(?:no|nope|non|nein|não)\b(?!\s*,?\s*but\b)(?:\s*[.,!:;—–-]|\s*$)", regex.IGNORECASE
)
# The sentence after an announced claim rules on *it*: a rating label, or a cue whose subject is
# the claim ("This is false", "The post is fake"), not on a detail ("the only thing that is
# incorrect is the typo").
_VERDICT_ON_IT = regex.compile(
    r"^\W*(?:(?:our\s+)?(?:verdict|rating|ruling|conclusion)\s*[:：-]|(?:false|fake|wrong|"
    r"untrue|incorrect|misleading|hoax|myth)\b)"
    r"|^\W*(?:(?:no|so|in\s+short)\W+)?(?:this|that|it|the\s+(?:claim|post|rumou?r|story|report|video|photo|image|picture|"
    r"message|news|quote|statement|tweet))\s+(?:is|was|are|were|has\s+been|'s)\b",
    regex.IGNORECASE,
)
# A cue denied: "is not false", "not a hoax", "no es falso": the frame is not read at all.
_DENIED = regex.compile(
    r"\b(?:not|n['’]t|never|no\s+es|n['’]est\s+pas|nicht|n[aã]o\s+[ée]|non\s+[èe])\s+"
    r"(?:\w+\s+)?(?:false|fake|a\s+hoax|a\s+myth|a\s+lie|wrong|incorrect|baseless|unfounded|"
    r"debunked|falso|falsa|faux|falsch|mentira)\b",
    regex.IGNORECASE,
)
_NEGATIONS = frozenset(
    """not no never none nobody nothing neither nor without cannot can't don't doesn't didn't
    isn't aren't wasn't weren't won't hasn't haven't hadn't shouldn't couldn't wouldn't n't
    nunca ni nadie ningún ninguna jamás não nem nenhum pas jamais aucun nicht kein keine keinen
    nie niemals non""".split()
)
_WORD = regex.compile(r"[\p{L}\p{N}][\p{L}\p{N}'’]*")
# Where a sentence turns to another statement: "X is a myth; in fact Y", "X is false, but Y".
_CLAUSE = regex.compile(r"\s*(?:[;—–]|,?\s+(?:but|while|whereas|however|although|though)\b)\s*")


# A sentence that attributes what follows to someone else's saying so, not to the page.
_REPORTING = regex.compile(
    r"\b(?:rumou?rs?|rumou?red|viral|circulating|circulated|forwarded|shared|sharing|posts?|"
    r"posted|tweets?|tweeted|videos?|voice\s+notes?|chain\s+messages?|messages?|screenshots?|"
    r"social\s+media|online|purports?|purported(?:ly)?|allegedly|supposedly|reportedly|"
    r"asked\s+(?:us\s+)?(?:whether|if)|asking\s+(?:whether|if)|wonder(?:s|ed|ing)?\s+"
    r"(?:whether|if)|talk\s+(?:that|of))\b",
    regex.IGNORECASE,
)
# A reporting sentence that also rules ("… says X, which is true"): it is not only a report.
_RULED = regex.compile(
    r"\b(?:(?:is|was|that's|this\s+is)\s+(?:true|accurate|correct|right)|confirmed|confirms|"
    r"indeed|in\s+fact)\b",
    regex.IGNORECASE,
)


@dataclass(frozen=True)
class Frame:
    """A debunking frame found in a passage: the span quoted and the cue that denies the claim."""

    start: int
    end: int
    cue: str


def _stem(word: str) -> str:
    return word if any(ch.isdigit() for ch in word) else word[:_PREFIX]


def _content(text: str) -> set[str]:
    return {_stem(w) for w in keywords(text, limit=64)}


def coverage(claim: str, text: str) -> float:
    """Return the share of the claim's content words that the text holds (same first letters)."""
    words = _content(claim)
    found = {_stem(w) for w in keywords(text, limit=100_000)}
    return len(words & found) / len(words) if words else 1.0


def _negations(text: str) -> int:
    found = 0
    for word in _WORD.findall(text.lower()):
        word = word.replace("’", "'")
        found += word in _NEGATIONS or word.endswith("n't")
    return found


def _without_cues(text: str) -> str:
    return str(_CUES.sub(" ", _LABEL.sub(" ", text)))


def name_words(text: str) -> set[str]:
    """Return the names and numbers of text: capitalised words past its first, digits."""
    found = _WORD.findall(text)
    return {
        w.lower()
        for i, w in enumerate(found)
        if any(ch.isdigit() for ch in w)
        or (i > 0 and w[:1].isupper() and w.lower() not in ALL_STOPWORDS)
    }


@dataclass(frozen=True)
class _Said:
    """What a claim says, as far as finding it restated needs."""

    words: set[str]
    negations: int
    names: set[str]

    def restated_in(self, clause: str) -> bool:
        """Return whether the clause repeats the claim (same words, polarity and names)."""
        rest = _without_cues(clause)
        found = _content(rest) & self.words
        if len(found) < 2 or len(found) < COVERAGE * len(self.words):
            return False
        if _negations(rest) % 2 != self.negations % 2:
            return False
        # "the theory that he was born in Kenya is false" does not restate "born in Hawaii"
        named = name_words(rest)
        return not (named - self.names and self.names - named)


def _cue(sentence: str) -> str | None:
    if _DENIED.search(sentence):
        return None
    label = _LABEL.match(sentence)
    if label:
        return str(label.group(0)).strip()
    match = _CUES.search(sentence)
    return str(match.group(0)) if match else None


def find(claim: str, passage: str) -> Frame | None:
    """Return the first debunking frame of the claim in the passage, or None."""
    if _CUES.search(claim) or _LABEL.match(claim):
        return None  # a claim about a debunk: the page may well support it
    claim_words = _content(claim)
    if len(claim_words) < 2:
        return None
    said = _Said(claim_words, _negations(claim), name_words(claim))
    spans = sentence_spans(passage)
    for index, (start, end) in enumerate(spans):
        sentence = passage[start:end]
        clauses = [c for c in _CLAUSE.split(sentence) if c and c.strip()]
        for clause in clauses:
            cue = _cue(clause)
            if cue is not None and said.restated_in(clause):
                return Frame(start, end, cue)
        if not said.restated_in(sentence):
            continue
        asked = sentence.rstrip().endswith(QUESTION_MARKS)
        if (asked or _CLAIM_LABEL.match(sentence)) and index + 1 < len(spans):
            after_start, after_end = spans[index + 1]
            after = passage[after_start:after_end]
            cue = _cue(after) if _VERDICT_ON_IT.search(after) else None
            if cue is None and asked:
                answer = _ANSWERED_NO.match(after)
                cue = answer.group(0).strip() if answer else None
            if cue is not None:
                return Frame(start, after_end, cue)
    return None


# Who won: a name is a run of capitalised words ("Naomi Osaka", "the Kansas City Chiefs").
_NAME = r"(?:[A-Z][\w'’.-]*)(?:\s+(?:[A-Z][\w'’.-]*|of|de|del|la|le|van|von|al))*"
_BEAT = (
    r"(?:beat|beats|defeated|defeats|edged|edges|overcame|overcomes|routed|upset|ousted|thrashed)"
)
_ROLES = [
    # group "a" names who won, group "b" who lost
    regex.compile(rf"(?P<a>{_NAME})\s+(?:has\s+|had\s+)?{_BEAT}\s+(?:the\s+)?(?P<b>{_NAME})"),
    regex.compile(
        rf"(?P<b>{_NAME})\s+(?:was|were)\s+(?:defeated|beaten|ousted)\s+by\s+(?:the\s+)?(?P<a>{_NAME})"
    ),
    regex.compile(
        rf"(?P<b>{_NAME})\s+(?:lost|loses|lose)\b[^.;]*?\bto\s+(?:the\s+)?(?P<a>{_NAME})"
    ),
    regex.compile(
        rf"(?P<a>{_NAME})\s+(?:won|wins|win|was\s+elected|were\s+elected)\b[^.;]*?\b(?:defeating|beating|over)\s+(?:the\s+)?(?P<b>{_NAME})"
    ),
    regex.compile(
        rf"(?P<a>{_NAME})\s+(?:has\s+|had\s+)?(?:won|wins|was\s+elected|were\s+elected)\b"
    ),
    regex.compile(rf"(?P<b>{_NAME})\s+(?:has\s+|had\s+)?(?:lost|loses)\b"),
]


def _tokens(name: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(name) if w.lower() not in ALL_STOPWORDS}


def _roles(text: str) -> tuple[set[str], set[str]]:
    """Return the name words of who won and who lost, as the text tells it."""
    won: set[str] = set()
    lost: set[str] = set()
    for pattern in _ROLES:
        for match in pattern.finditer(text):
            groups = match.groupdict()
            won |= _tokens(groups.get("a") or "")
            lost |= _tokens(groups.get("b") or "")
    return won, lost


def reversed_roles(claim: str, passage: str) -> Frame | None:
    """Return the sentence that names the claim's winner as the loser (or the reverse).

    "Serena Williams won the 2018 US Open final" against "Naomi Osaka defeated Serena Williams
    in the 2018 US Open final": the same event (the claim's other content words, numbers
    exactly, at `COVERAGE`), its roles the other way round.
    """
    won, lost = _roles(claim)
    if not won and not lost:
        return None
    rest = _content(claim) - {_stem(w) for w in won | lost}
    for start, end in sentence_spans(passage):
        sentence = passage[start:end]
        their_won, their_lost = _roles(sentence)
        swapped = (won & their_lost and not won & their_won) or (
            lost & their_won and not lost & their_lost
        )
        if not swapped:
            continue
        shared = _content(sentence) & rest
        numbers = {w for w in rest if any(ch.isdigit() for ch in w)}
        if numbers <= _content(sentence) and len(shared) >= COVERAGE * len(rest):
            return Frame(start, end, "roles reversed")
    return None


def reported(claim: str, passage: str) -> Frame | None:
    """Return the sentence that only reports the claim, when no sentence of the passage states it.

    A sentence restating the claim (`_Said.restated_in`) with a reporting cue and no ruling
    ("is true", "confirmed") reports it; a restating sentence without such a cue states it, and
    then the passage is left to the model.
    """
    if _REPORTING.search(claim):
        return None  # a claim about what was said: a page saying so may support it
    claim_words = _content(claim)
    if len(claim_words) < 2:
        return None
    said = _Said(claim_words, _negations(claim), name_words(claim))
    found: Frame | None = None
    for start, end in sentence_spans(passage):
        sentence = passage[start:end]
        if not said.restated_in(_REPORTING.sub(" ", sentence)):
            continue
        cue = _REPORTING.search(sentence)
        if cue is None or _RULED.search(sentence):
            return None  # the passage states it itself
        found = found or Frame(start, end, str(cue.group(0)))
    return found


def reread(
    claim: str, passages: Sequence[str], readings: Sequence[PassageStance]
) -> list[PassageStance]:
    """Return the readings with each passage that debunks the claim read as a refutation.

    Such a passage refutes with at least `FRAME_REFUTES` and supports not at all; its quote is
    the framing sentence (or the model's, where the model's refutation is stronger still).
    """
    out: list[PassageStance] = []
    for passage, reading in zip(passages, readings, strict=True):
        frame = find(claim, passage) or reversed_roles(claim, passage)
        if frame is None:
            reading = contradicted(claim, reading)
            if reading.supports > reading.refutes and reported(claim, passage) is not None:
                # only a report of the claim: what support the model read is taken away
                nei = 1.0 - reading.refutes
                reading = dataclasses.replace(reading, probs=(0.0, reading.refutes, nei))
            out.append(reading)
            continue
        refutes = max(reading.refutes, FRAME_REFUTES)
        start, end = (
            (reading.start, reading.end)
            if reading.refutes >= FRAME_REFUTES and reading.label == REFUTES
            else (frame.start, frame.end)
        )
        out.append(PassageStance((0.0, refutes, 1.0 - refutes), passage[start:end], start, end))
    return out


def contradicted(claim: str, reading: PassageStance) -> PassageStance:
    """Return the reading with the passage's contradicting sentence counted, where it is about
    the claim; else without it.

    A passage read as support may hold another sentence that the model reads as contradicting
    the claim (`PassageStance.against`): "The liner that sank in 1915 was the Lusitania." beside
    "The Titanic went down on its maiden voyage in April 1912." for "The Titanic sank in 1915.".
    That refutation counts (so it vetoes the support, or decides) only when the sentence holds
    at least `AGAINST_COVERAGE` of the claim's content words: the model also reads sentences
    about something else as refutations ("In cooking, however, it is usually treated as a
    vegetable." against "Tomatoes are botanically a fruit.", 0.74), as it reads passages that
    share only a phrase (`verdict.bearing`).
    """
    if not reading.against:
        return reading
    if reading.against_refutes > reading.refutes and (
        coverage(claim, reading.against) >= AGAINST_COVERAGE
    ):
        s, r = reading.supports, reading.against_refutes
        return dataclasses.replace(reading, probs=(s, r, max(0.0, 1.0 - s - r)))
    return dataclasses.replace(reading, against="", against_refutes=0.0)


def read(model: StanceModel, claim: str, passages: Sequence[str]) -> list[PassageStance]:
    """Return the verifier's reading of each passage: the stance model's, frames read in code."""
    return reread(claim, passages, model.score_passages(claim, passages))
