"""Claim/passage pairs from the public fact-checking and NLI sets, with one label space.

Each loader reads one file format of ../shared/data/train (README there) into `Pair`s; `load`
picks the loader by file name. Labels map to `LABELS` by the README's label map. Every pair keeps
a `group` (the claim or case it came from) so that splits are claim-disjoint: a claim's pairs
all land on one side.

Failure policy: a malformed file raises `PairDataError` naming the file and line; a row with an
unknown label is skipped and counted (`Loaded.skipped`), never guessed.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import json
import random
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.verifier.stance import LABELS, NEI, REFUTES, SUPPORTS

_LABEL_MAP = {
    "supports": SUPPORTS,
    "support": SUPPORTS,
    "supported": SUPPORTS,
    "entailment": SUPPORTS,
    "refutes": REFUTES,
    "refute": REFUTES,
    "refuted": REFUTES,
    "not enough info": NEI,
    "notenoughinfo": NEI,
    "not enough": NEI,
    "neutral": NEI,
}


class PairDataError(ValueError):
    """A pair file that cannot be read as the format its name says."""


@dataclass(frozen=True)
class Pair:
    """One (claim, evidence passage) with its stance label (an index into `LABELS`)."""

    claim: str
    evidence: str
    label: int
    group: str
    source: str


@dataclass
class Loaded:
    """The pairs read from one file and how many rows were skipped."""

    pairs: list[Pair] = field(default_factory=list)
    skipped: int = 0


def label_index(raw: str, *, not_entailment: int | None = None) -> int | None:
    """Return the label index of a data set's label string, or None when it has none."""
    key = raw.strip().lower().replace("_", " ")
    if key in ("not entailment", "notentailment"):
        return not_entailment
    return _LABEL_MAP.get(key)


def _jsonl(path: Path) -> Iterator[tuple[int, dict[str, object]]]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise PairDataError(f"{path}:{number}: not JSON ({exc.msg})") from exc
            if not isinstance(row, dict):
                raise PairDataError(f"{path}:{number}: expected a JSON object")
            yield number, row


def _text(row: dict[str, object], key: str) -> str:
    value = row.get(key)
    return " ".join(str(value).split()) if value is not None else ""


def load_claim_evidence_jsonl(path: Path, source: str) -> Loaded:
    """VitaminC, FEVER (symmetric, adversarial, triggers), ANLI: `claim`, `evidence`, `label`."""
    out = Loaded()
    for number, row in _jsonl(path):
        label = label_index(str(row.get("label") or row.get("gold_label") or ""))
        claim, evidence = _text(row, "claim"), _text(row, "evidence")
        if label is None or not claim or not evidence:
            out.skipped += 1
            continue
        group = str(row.get("case_id") or row.get("id") or f"{path.name}:{number}")
        out.pairs.append(Pair(claim, evidence, label, f"{source}:{group}", source))
    return out


def load_sufficient_facts(path: Path) -> Loaded:
    """SufficientFacts: the evidence after removal, labelled `label_after` (hard NEI pairs)."""
    out = Loaded()
    for number, row in _jsonl(path):
        label = label_index(str(row.get("label_after") or row.get("label") or ""))
        evidence = row.get("evidence") or row.get("evidence_after") or ""
        if isinstance(evidence, list):
            evidence = " ".join(str(e) for e in evidence)
        claim = _text(row, "claim")
        evidence = " ".join(str(evidence).split())
        if label is None or not claim or not evidence:
            out.skipped += 1
            continue
        group = str(row.get("id") or f"{number}")
        out.pairs.append(Pair(claim, evidence, label, f"sufficient:{group}", "sufficient_facts"))
    return out


def load_checkcovid(path: Path, corpus: Path | None = None) -> Loaded:
    """Check-COVID: claims against CORD-19 abstracts (`corpus.json` beside the claims file).

    The evidence is the annotated sentences in abstract order; a claim with none (NOT ENOUGH
    INFO) is paired with the abstract's first sentences, which is what a reader would have.
    """
    corpus = corpus or path.with_name("corpus.json")
    abstracts = {str(row.get("cord_id")): row.get("abstract") or [] for _, row in _jsonl(corpus)}
    out = Loaded()
    for number, row in _jsonl(path):
        label = label_index(str(row.get("label") or ""))
        sentences = abstracts.get(str(row.get("cord_id")))
        claim = _text(row, "claim")
        if label is None or not claim or not isinstance(sentences, list) or not sentences:
            out.skipped += 1
            continue
        annotated = row.get("evidence_set")
        indices = sorted(
            {
                int(e["sent_index"])
                for e in (annotated if isinstance(annotated, list) else [])
                if isinstance(e, dict) and isinstance(e.get("sent_index"), int)
            }
        )
        chosen = [sentences[i] for i in indices if 0 <= i < len(sentences)] or sentences[:3]
        evidence = " ".join(" ".join(str(s) for s in chosen).split())
        group = str(row.get("id") or number).rsplit("_", 1)[0]
        out.pairs.append(Pair(claim, evidence, label, f"checkcovid:{group}", "checkcovid"))
    return out


def load_rte_tsv(path: Path, source: str, *, not_entailment: int) -> Loaded:
    """COVID-Fact / SciFact RTE: `sentence1` evidence, `sentence2` claim, entailment label."""
    out = Loaded()
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = [h.strip().lower() for h in next(reader, [])]
        if "sentence1" not in header or "sentence2" not in header:
            raise PairDataError(f"{path}: expected sentence1/sentence2 columns, got {header}")
        ev, cl, lb = header.index("sentence1"), header.index("sentence2"), len(header) - 1
        for number, row in enumerate(reader, 2):
            if len(row) <= max(ev, cl, lb):
                out.skipped += 1
                continue
            label = label_index(row[lb], not_entailment=not_entailment)
            if label is None:
                out.skipped += 1
                continue
            claim, evidence = " ".join(row[cl].split()), " ".join(row[ev].split())
            out.pairs.append(Pair(claim, evidence, label, f"{source}:{claim}", source))
            del number
    return out


def load_healthver(path: Path) -> Loaded:
    """HealthVer CSV: `evidence`, `claim`, `label` (Supports / Refutes / Neutral)."""
    out = Loaded()
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            label = label_index(row.get("label") or "")
            claim = " ".join((row.get("claim") or "").split())
            evidence = " ".join((row.get("evidence") or "").split())
            if label is None or not claim or not evidence:
                out.skipped += 1
                continue
            out.pairs.append(Pair(claim, evidence, label, f"healthver:{claim}", "healthver"))
    return out


# The AVeriTeC train claims `bench.verifier_thresholds` fits thresholds on (its default sample):
# never training pairs, so a model trained on AVeriTeC gets thresholds from claims it never saw.
THRESHOLD_SAMPLE = 600
_AVERITEC_STANCE = {"Supported": SUPPORTS, "Refuted": REFUTES, "Not Enough Evidence": NEI}


def load_averitec(path: Path) -> Loaded:
    """AVeriTeC train: each answer (question and answer, as the eval indexes it) with its claim.

    The claim's label stands for each of its answers (the AVeriTeC baseline's assumption: noisy,
    an answer may only give context); Conflicting claims are skipped (no one stance), and so are
    the claims of the threshold sample (`THRESHOLD_SAMPLE`, seed 0).
    """
    from bots.evaluation.averitec import load_averitec as claims_of
    from bots.evaluation.averitec import stratified_sample

    data = json.loads(path.read_text(encoding="utf-8"))
    held = {c.index for c in stratified_sample(claims_of(path), THRESHOLD_SAMPLE, seed=0)}
    out = Loaded()
    for index, item in enumerate(data):
        label = _AVERITEC_STANCE.get(str(item.get("label")))
        if label is None or index in held:
            out.skipped += 1
            continue
        for question in item.get("questions") or []:
            for answer in question.get("answers") or []:
                if answer.get("answer_type") == "Unanswerable":
                    continue
                text = str(answer.get("answer") or "").strip()
                explanation = str(answer.get("boolean_explanation") or "").strip()
                text = f"{text}. {explanation}" if explanation else text
                evidence = " ".join(f"{question.get('question', '')} {text}".split())
                claim = " ".join(str(item.get("claim") or "").split())
                if claim and evidence:
                    out.pairs.append(Pair(claim, evidence, label, f"averitec:{index}", "averitec"))
    return out


def load(path: Path) -> Loaded:
    """Read a pair file of ../shared/data/train by its name (see that README's table)."""
    name, parent = path.name, path.parent.name
    if not path.is_file():
        raise PairDataError(f"{path}: no such file")
    if parent == "averitec":
        return load_averitec(path)
    if parent == "checkcovid" or name.startswith("covidCheck"):
        return load_checkcovid(path)
    if parent == "sufficient_facts":
        return load_sufficient_facts(path)
    if name.startswith("rte_covidfact"):
        return load_rte_tsv(path, "covidfact", not_entailment=REFUTES)
    if name.startswith("rte_scifact"):
        return load_rte_tsv(path, "scifact", not_entailment=NEI)
    if name.startswith("healthver"):
        return load_healthver(path)
    if path.suffix == ".jsonl":
        return load_claim_evidence_jsonl(path, f"{parent}/{path.stem}")
    raise PairDataError(f"{path}: unknown pair file (see ../shared/data/train/README.md)")


def held_apart(group: str, fraction: float, salt: str = "factbot") -> bool:
    """Return whether a group falls in the held-apart part (a stable hash, not the seed)."""
    digest = hashlib.sha256(f"{salt}:{group}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


def split(pairs: Iterable[Pair], fraction: float, salt: str) -> tuple[list[Pair], list[Pair]]:
    """Split pairs claim-disjointly: (kept, held apart), each group wholly on one side."""
    kept: list[Pair] = []
    apart: list[Pair] = []
    for pair in pairs:
        (apart if held_apart(pair.group, fraction, salt) else kept).append(pair)
    return kept, apart


def with_unrelated(pairs: Sequence[Pair], count: int, seed: int) -> list[Pair]:
    """Return `count` not-enough-info pairs: claims beside evidence from another group.

    Retrieval hands the verifier many passages about something else; these teach it that a
    passage on another subject is not evidence either way.
    """
    rng = random.Random(seed)
    made: list[Pair] = []
    if len({p.group for p in pairs}) < 2:
        return made
    while len(made) < count:
        a, b = rng.choice(pairs), rng.choice(pairs)
        if a.group != b.group:
            made.append(Pair(a.claim, b.evidence, NEI, a.group, f"{a.source}+unrelated"))
    return made


# Question-answer evidence (AVeriTeC's gold evidence is "question answer" text, and so are FAQ
# and fact-check pages): a claim asked as a yes/no question, or an open question about it.
_YES_NO = (
    "Is it true that {c}?",
    "Is it correct that {c}?",
    "Did the sources confirm that {c}?",
    "Was it reported that {c}?",
)
_OPEN = (
    "What do the sources say about this?",
    "What does the record show?",
    "What is known about this?",
)
EXTRACTIVE = 0.3  # share of question-form pairs answered by the evidence alone (no yes/no)


def _bare(claim: str) -> str:
    """Return a claim on one line without its closing punctuation."""
    return " ".join(claim.split()).rstrip(" .!?")


def _clause(claim: str) -> str:
    """Return a claim as a clause to follow "that": a leading function word lowered."""
    text = _bare(claim)
    if len(text) > 1 and text[0].isupper() and text[1].islower():
        first = text.split(" ", 1)[0]
        if first.lower() in _FUNCTION_WORDS:
            text = text[0].lower() + text[1:]  # "The vaccine ..." but not "Biden ..."
    return text


def as_question(claim: str) -> str:
    """Return a yes/no question asking whether a declarative claim holds."""
    return f"{_clause(claim)}?"


_FUNCTION_WORDS = frozenset(
    "a an the this that these those there it its in on at of for from by with as all some "
    "many most more less few no one two three four five six seven eight nine ten".split()
)


def answered(question_of: str, evidence: str, label: int, rng: random.Random) -> str:
    """Return evidence as the answer to a question about the claim `question_of`.

    Supporting evidence answers a yes/no question "Yes.", refuting evidence "No."; a share of
    pairs (and every not-enough-info pair) is answered by the evidence alone, after a yes/no or
    an open question, so the answer word is never the only cue.
    """
    if label == NEI or rng.random() < EXTRACTIVE:
        question = rng.choice(_OPEN) if rng.random() < 0.5 else _yes_no(question_of, rng)
        return f"{question} {evidence}"
    word = "Yes" if label == SUPPORTS else "No"
    return f"{_yes_no(question_of, rng)} {word}. {evidence}"


def _yes_no(claim: str, rng: random.Random) -> str:
    return rng.choice(_YES_NO).format(c=_clause(claim))


def question_form(pairs: Sequence[Pair], share: float, seed: int) -> list[Pair]:
    """Return the pairs with a `share` of them given as question-answer evidence.

    A converted supports/refutes pair keeps its label ("Is it true that <claim>? No. <evidence>"
    refutes). A converted not-enough-info pair whose evidence came from another claim (an
    unrelated pair, source `…+unrelated`) is asked about that other claim, so an answer "No." to
    a question about something else is still not evidence either way.
    """
    rng = random.Random(f"questions:{seed}")
    by_evidence = {p.evidence: p for p in pairs if not p.source.endswith("+unrelated")}
    out: list[Pair] = []
    for pair in pairs:
        if rng.random() >= share:
            out.append(pair)
            continue
        asked, label = pair.claim, pair.label
        origin = by_evidence.get(pair.evidence)
        if pair.source.endswith("+unrelated") and origin is not None:
            asked, label = origin.claim, origin.label  # the answer as its own claim had it
        evidence = answered(asked, pair.evidence, label, rng)
        out.append(dataclasses.replace(pair, evidence=evidence, source=f"{pair.source}+question"))
    return out


# A page that only repeats a claim, attributed to someone ("a viral post claims that …"), or asks
# it, is no evidence for it; a fact-check's rating is. The shipped model read all of these as
# support (mean p 0.78-0.87 on FEVER-Symmetric claims), so a false claim quoted by the pages
# that debunk it came out accurate.
_REPORTED = (
    "A viral post claims that {c}.",
    "Posts shared on social media say that {c}.",
    "Some users online claimed that {c}.",
    "Claim: {C}",
    "The claim that {c} has been shared widely.",
    "Is it true that {c}?",
)
_RATINGS = {
    SUPPORTS: ("True", "Correct", "Accurate"),
    REFUTES: ("False", "Incorrect", "Fake"),
    NEI: ("Unproven", "Unverified"),
}
RESTATED_ONLY = 0.5  # share of framed pairs that are the framed claim alone (not enough info)


def _reported(claim: str, rng: random.Random) -> str:
    return rng.choice(_REPORTED).format(c=_clause(claim), C=f"{_bare(claim)}.")


def framed(pairs: Sequence[Pair], share: float, seed: int) -> list[Pair]:
    """Return the pairs with a `share` of them framed as pages that report or rate the claim.

    Half of those become the claim restated and attributed ("A viral post claims that <claim>.",
    "Claim: <claim>", or asked) with nothing else: not enough info. The rest keep their
    evidence and label behind such a restatement, or behind a fact-check's rating of the claim
    that agrees with the label ("Claim: <claim> Rating: False. <evidence>" refutes), so the
    restated claim decides nothing and a rating reads as what it is. Unrelated pairs are left.
    """
    rng = random.Random(f"frames:{seed}")
    out: list[Pair] = []
    for pair in pairs:
        if pair.source.endswith("+unrelated") or rng.random() >= share:
            out.append(pair)
            continue
        if rng.random() < RESTATED_ONLY:
            evidence, label = _reported(pair.claim, rng), NEI
        elif rng.random() < 0.5:
            evidence, label = f"{_reported(pair.claim, rng)} {pair.evidence}", pair.label
        else:
            rating = rng.choice(_RATINGS[pair.label])
            restated = _bare(pair.claim)
            evidence, label = f"Claim: {restated}. Rating: {rating}. {pair.evidence}", pair.label
        out.append(
            dataclasses.replace(
                pair, evidence=evidence, label=label, source=f"{pair.source}+framed"
            )
        )
    return out


def balanced(pairs: Sequence[Pair], limit: int, seed: int) -> list[Pair]:
    """Return at most `limit` pairs, as near an equal share per label as the data allows."""
    rng = random.Random(seed)
    by_label: dict[int, list[Pair]] = {}
    for pair in pairs:
        by_label.setdefault(pair.label, []).append(pair)
    for bucket in by_label.values():
        rng.shuffle(bucket)
    chosen: list[Pair] = []
    remaining = dict(by_label)
    budget = min(limit, len(pairs))
    while remaining and len(chosen) < budget:
        share = max(1, (budget - len(chosen)) // len(remaining))
        for label in list(remaining):
            bucket = remaining[label]
            chosen.extend(bucket[:share])
            remaining[label] = bucket[share:]
            if not remaining[label]:
                del remaining[label]
    chosen = chosen[:budget]
    rng.shuffle(chosen)
    return chosen


def label_counts(pairs: Iterable[Pair]) -> dict[str, int]:
    """Return how many pairs carry each label, by label name."""
    counts = Counter(p.label for p in pairs)
    return {name: counts.get(i, 0) for i, name in enumerate(LABELS)}


# Contrast pairs (`factbot train stance --contrast SHARE`): the claim against pages whose words
# are its own. A plain statement of it supports it; its negation, a page that calls it false or
# a myth, and the same sentence with another number or the parties swapped refute it; a page
# that only reports, attributes or asks it is not enough info. The shipped model read all of
# these as support (overlap read as agreement): a debunking page "supported" what it debunks.
# The wordings differ from `bench.restatement`'s probe frames, which stay unseen.
_AUXILIARIES = frozenset(
    "is are was were has have had can could will would should may might must shall".split()
)
_CONTRACTIONS = {
    "isn't": "is",
    "aren't": "are",
    "wasn't": "was",
    "weren't": "were",
    "hasn't": "has",
    "haven't": "have",
    "hadn't": "had",
    "can't": "can",
    "cannot": "can",
    "couldn't": "could",
    "won't": "will",
    "wouldn't": "would",
    "shouldn't": "should",
    "doesn't": "does",
    "don't": "do",
    "didn't": "did",
}
_DO_FORMS = {"does", "do", "did"}
_DEBUNKED = (
    "It is not true that {c}.",
    "Myth: {C}. Fact: this is wrong.",
    "{C}? No, that is false.",
    "There is no truth to reports that {c}; the story is fabricated.",
    "Despite what many believe, it is a misconception that {c}.",
    "We rated the statement \u201c{C}\u201d as false.",
    "Experts dismissed the rumour that {c} as a hoax.",
)
_CONFIRMED = (
    "It is true that {c}.",
    "Yes: {c}, records confirm.",
    "Officials confirmed that {c}.",
    "{C}, according to official records.",
)
_RESTATED = (
    "A reader sent us this: \u201c{C}.\u201d",
    "Messages forwarded on WhatsApp say that {c}.",
    "We were asked to look into whether {c}.",
    "Several accounts posted that {c}; we have not checked it.",
    "Headline: {C}?",
    "Some people believe that {c}.",
)
# A number standing alone: not part of a name ("COVID-19", "F-16") or a score ("2-1").
_NUMBER = re.compile(r"(?<![\w\-])\d[\d,]*(?:\.\d+)?(?![\w\-])")
_DO_SUPPORT = {"VBZ": "does", "VBD": "did", "VBP": "do"}


def negated(claim: str, nlp: Any = None) -> str | None:
    """Return the claim with its first verb negated (or a negation removed), or None.

    Word rules first: "X is Y" -> "X is not Y", "X has won" -> "X has not won", "X didn't
    win" -> "X did win", "X never won" -> "X won". A claim with no auxiliary is parsed by
    `nlp` (a spaCy pipeline) when given: "X protects Y" -> "X does not protect Y"; else None.
    """
    words = _bare(claim).split(" ")
    for i, word in enumerate(words):
        low = word.lower()
        if low in _CONTRACTIONS:
            words[i] = _CONTRACTIONS[low] if word.islower() else _CONTRACTIONS[low].capitalize()
            return " ".join(words) + "."
        if low in ("not", "never") and i > 0:
            return " ".join(words[:i] + words[i + 1 :]) + "."
    for i, word in enumerate(words[1:], 1):
        if word.lower() in _AUXILIARIES | _DO_FORMS:
            return " ".join([*words[: i + 1], "not", *words[i + 1 :]]) + "."
    if nlp is None:
        return None
    text = _bare(claim)
    for token in nlp(text):
        if token.dep_ == "ROOT" and token.tag_ in _DO_SUPPORT and token.i > 0:
            verb = f"{_DO_SUPPORT[token.tag_]} not {token.lemma_}"
            return f"{text[: token.idx]}{verb}{text[token.idx + len(token.text) :]}."
    return None


def renumbered(claim: str, rng: random.Random) -> str | None:
    """Return the claim with one of its numbers changed (a year by 1-9, others by 10-90 %)."""
    found = list(_NUMBER.finditer(claim))
    if not found:
        return None
    match = rng.choice(found)
    raw = match.group().replace(",", "")
    try:
        value = float(raw)
    except ValueError:
        return None
    if "." not in raw and 1000 <= value <= 2100:
        new = str(int(value) + rng.choice((-1, 1)) * rng.randint(1, 9))
    else:
        factor = 1 + rng.choice((-1, 1)) * rng.uniform(0.1, 0.9)
        changed = value * factor
        new = f"{changed:.1f}" if "." in raw else str(max(0, round(changed)))
        if new == raw or float(new) == value:
            new = str(int(value) + rng.randint(1, 9))
    return f"{claim[: match.start()]}{new}{claim[match.end() :]}"


def contrasted(
    claim: str, kind: str, rng: random.Random, nlp: Any = None
) -> tuple[str, int] | None:
    """Return (passage, label) of one contrast kind for a claim, or None where it does not apply.

    Kinds: `plain` (the claim stated: supports), `confirmed` (supports), `negated`,
    `debunked`, `renumbered` (refutes), `restated` (not enough info).
    """
    c, capital = _clause(claim), _bare(claim)
    if kind == "plain":
        return f"{capital}.", SUPPORTS
    if kind == "confirmed":
        return rng.choice(_CONFIRMED).format(c=c, C=capital), SUPPORTS
    if kind == "debunked":
        return rng.choice(_DEBUNKED).format(c=c, C=capital), REFUTES
    if kind == "restated":
        return rng.choice(_RESTATED).format(c=c, C=capital), NEI
    if kind == "negated":
        found = negated(claim, nlp)
        return (found, REFUTES) if found else None
    if kind == "renumbered":
        found = renumbered(_bare(claim), rng)
        return (f"{found}.", REFUTES) if found else None
    raise ValueError(f"unknown contrast kind {kind!r}")


CONTRAST_KINDS = ("plain", "confirmed", "negated", "debunked", "renumbered", "restated")


def contrast(pairs: Sequence[Pair], share: float, seed: int, nlp: Any = None) -> list[Pair]:
    """Return the pairs with a `share` of them replaced by contrast pairs of their own claim.

    A chosen pair's claim is set against a passage made from its own words (`contrasted`), so
    overlap alone never decides: the same words support, refute or say nothing by how they are
    framed. The kinds are drawn so that support, refutation and not enough info stay balanced;
    a kind that does not apply to the claim (no verb to negate, no number) falls back to
    `debunked`. Half the negated pairs swap roles: the negated claim against the plain one.
    Unrelated pairs are left.
    """
    rng = random.Random(f"contrast:{seed}")
    weights = {"plain": 2, "confirmed": 1, "negated": 1, "debunked": 1, "renumbered": 1}
    weights["restated"] = 3
    kinds, odds = list(weights), list(weights.values())
    out: list[Pair] = []
    for pair in pairs:
        if pair.source.endswith("+unrelated") or rng.random() >= share:
            out.append(pair)
            continue
        kind = rng.choices(kinds, odds)[0]
        claim = pair.claim
        made = contrasted(claim, kind, rng, nlp)
        if made is None:
            kind, made = "debunked", contrasted(claim, "debunked", rng)
        assert made is not None
        passage, label = made
        if kind == "negated" and passage != f"{_bare(claim)}." and rng.random() < 0.5:
            claim, passage = passage, f"{_bare(claim)}."
        out.append(Pair(claim, passage, label, pair.group, f"{pair.source}+contrast:{kind}"))
    return out
