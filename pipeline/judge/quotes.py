"""Evidence extraction with a model (stage "extraction"): verbatim quotes about a claim.

MUSE quotes, from each credible page, up to two paragraphs that refute the claim explicitly and
up to two that give missing context, and stops after two refuting pages. Here the evidence
arrives ordered by credibility then relevance; its passages are grouped by document (one
numbered block per document) and read in batches of `docs_per_call` documents, so the number of
calls does not grow with the number of pages: at most `max_calls` calls, and none after quotes
from `stop_after_refuting` documents refute the claim. A document may also give one supporting
quote, which the judge needs as much as the refutations.

The model does not copy quotes: every sentence of a batch is shown on its own line with a number
(`[12] …`), and the model answers with the numbers of up to `MAX_SENTENCES` sentences per quote
and a stance. Code turns each run of consecutive numbers from one passage into the exact passage
text they cover, tied to that passage's evidence id, so a quote is verbatim by construction and
the model writes a few tokens where it used to copy hundreds (copying was most of the stage's
time on the local model). Numbers the call did not show are refused by the schema's enum and
dropped in code; bracketed numbers inside page text are rewritten (`[3]` -> `(3)`), so a page
cannot forge a sentence marker. Per-document caps are enforced here too.

Failure policy: never raises. A failed call (`ModelOutputError`, `ModelUnavailableError`) ends
the extraction with the quotes gathered so far; invalid quotes are dropped and logged.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from pipeline.llm.client import LLMClient, ModelOutputError, ModelUnavailableError
from pipeline.llm.output import one_of
from pipeline.llm.prompts import data_block, neutralise, system_prompt
from pipeline.llm.usage import UsageMeter, count_fallback
from pipeline.records.domain import Claim, Evidence, Quote, Stance
from pipeline.util.text import sentence_spans

log = logging.getLogger(__name__)

STAGE = "extraction"
CAPS = {Stance.REFUTES: 2, Stance.CONTEXT: 2, Stance.SUPPORTS: 1}  # quotes per document
MIN_QUOTE_WORDS = 4
MAX_DOCUMENT_CHARS = 6000
MAX_CLAIM_CHARS = 1000
MAX_QUOTE_CHARS = 700
MAX_SENTENCES = 3  # consecutive sentences one quote may span
MAX_QUOTES_PER_DOCUMENT = sum(CAPS.values())
_CLOSERS = "\"'”’)]"
_MARKER_RE = re.compile(r"\[(\d+)\]")  # a page's own "[3]" must not pass for a sentence number

TASK = """\
Task: find what the numbered documents say about the claim in the <claim> block. Every \
sentence of the documents is on its own line after its number in square brackets, like [12].

From each document, pick:
- "refutes": at most 2 quotes that explicitly say the claim is false or state facts that \
contradict it;
- "context": at most 2 quotes that give context the claim leaves out and that change how it \
should be read (who, what, when, where, why, how, how much);
- "supports": at most 1 quote that explicitly confirms the claim. A sentence that only \
repeats or reports the claim does not support it.

A quote is one sentence, or up to 3 consecutive sentences of one document: answer with their \
numbers in "sentences" and the quote's stance. Leave out documents with nothing relevant, and \
answer with an empty quotes list when no document is relevant."""


class _QuoteAnswer(BaseModel):
    # chosen before the stance: the model reads the sentence, then says what it does
    sentences: list[int]
    stance: Literal["refutes", "context", "supports"]


class _QuotesAnswer(BaseModel):
    quotes: list[_QuoteAnswer]


@dataclass(frozen=True)
class _Sentence:
    """One sentence of an evidence passage: where it is in the passage text."""

    evidence: Evidence
    start: int
    end: int

    @property
    def text(self) -> str:
        return self.evidence.passage.text[self.start : self.end]


@dataclass(frozen=True)
class _Block:
    """One document and its evidence passages, in the order they arrived."""

    evidence: tuple[Evidence, ...]

    def sentences(self) -> list[_Sentence]:
        """Return the document's sentences in order, each once, within MAX_DOCUMENT_CHARS."""
        seen: set[str] = set()
        kept: list[_Sentence] = []
        used = 0
        for item in self.evidence:
            text = item.passage.text
            for start, end in sentence_spans(text):
                while end < len(text) and text[end] in _CLOSERS:  # keep a quote's closing mark
                    end += 1
                sentence = _Sentence(item, start, end)
                key = " ".join(sentence.text.split())
                if key in seen:  # overlapping passages repeat sentences
                    continue
                if used + len(key) > MAX_DOCUMENT_CHARS:
                    return kept
                seen.add(key)
                used += len(key) + 1
                kept.append(sentence)
        return kept

    def render(self, n: int, numbered: Sequence[tuple[int, _Sentence]]) -> str:
        """Return the document's data block, numbered n, one numbered sentence a line."""
        document = self.evidence[0].document
        published = document.published_at.date().isoformat() if document.published_at else None
        lines = [f"[{number}] {_shown(s.text)}" for number, s in numbered]
        return data_block(
            "document",
            "\n".join(lines),
            max_chars=2 * MAX_DOCUMENT_CHARS,  # already bounded by sentences(); markers add
            n=n,
            url=document.url,
            title=document.title or None,
            published=published,
        )


def _shown(sentence: str) -> str:
    """Return a sentence as a prompt shows it: one line, neutralised, no forged numbers."""
    return _MARKER_RE.sub(r"(\1)", neutralise(" ".join(sentence.split())))


def _group(evidence: Sequence[Evidence]) -> list[_Block]:
    """Return the evidence grouped by document, in the order documents first appear."""
    by_document: dict[str, list[Evidence]] = {}
    passages: set[str] = set()
    for item in evidence:
        if item.passage.id in passages:
            continue
        passages.add(item.passage.id)
        by_document.setdefault(item.document.id, []).append(item)
    return [_Block(tuple(items)) for items in by_document.values()]


@dataclass(frozen=True)
class _Batch:
    """The documents of one call, and every sentence it shows under its number."""

    blocks: Sequence[_Block]
    shown: Sequence[Sequence[tuple[int, _Sentence]]]  # per block, its numbered sentences
    numbered: dict[int, _Sentence]

    @classmethod
    def of(cls, blocks: Sequence[_Block]) -> _Batch:
        numbered: dict[int, _Sentence] = {}
        shown = []
        for block in blocks:
            mine = [(len(numbered) + k, s) for k, s in enumerate(block.sentences(), 1)]
            numbered.update(mine)
            shown.append(mine)
        return cls(blocks, shown, numbered)

    def render(self) -> list[str]:
        return [
            block.render(n, mine)
            for n, (block, mine) in enumerate(zip(self.blocks, self.shown, strict=True), 1)
        ]

    def schema(self) -> dict[str, Any]:
        """Return the answer's JSON schema: only this batch's numbers, bounded lists."""
        body = _QuotesAnswer.model_json_schema()
        body["properties"]["quotes"]["maxItems"] = MAX_QUOTES_PER_DOCUMENT * len(self.blocks)
        body["$defs"]["_QuoteAnswer"]["properties"]["sentences"] = {
            "type": "array",
            "items": one_of(list(self.numbered) or [1]),
            "minItems": 1,
            "maxItems": MAX_SENTENCES,
        }
        return body

    def spans(self, numbers: Sequence[int]) -> list[tuple[Evidence, int, str]]:
        """Return the passage text each run of consecutive numbers from one passage covers.

        A run is cut where a number is missing or the passage changes, and after
        MAX_SENTENCES sentences or MAX_QUOTE_CHARS (a first sentence longer than that is cut
        at a word, and stays a verbatim prefix).
        """
        runs: list[list[_Sentence]] = []
        last = None
        for number in sorted(set(numbers)):
            sentence = self.numbered[number]
            run = runs[-1] if runs else None
            if (
                run is not None
                and last == number - 1
                and sentence.evidence.id == run[-1].evidence.id
                and len(run) < MAX_SENTENCES
                and sentence.end - run[0].start <= MAX_QUOTE_CHARS
            ):
                run.append(sentence)
            else:
                runs.append([sentence])
            last = number
        out = []
        for run in runs:
            evidence, start, end = run[0].evidence, run[0].start, run[-1].end
            text = evidence.passage.text[start:end]
            if len(text) > MAX_QUOTE_CHARS:
                cut = text[:MAX_QUOTE_CHARS]
                text = cut[: cut.rfind(" ")] if " " in cut else cut
            out.append((evidence, start, text.rstrip()))
        return out


def _drop(claim: Claim, numbers: object, why: str) -> None:
    log.info(
        "quote dropped",
        extra={"stage": STAGE, "claim_id": claim.id, "sentences": numbers, "why": why},
    )


@dataclass
class _Gathered:
    """Quotes accepted so far, with what the caps and the early stop need."""

    quotes: list[tuple[int, int, Quote]]  # (evidence order, offset in passage, quote)
    order: dict[str, int]  # evidence id -> position in the input
    per_document: Counter[tuple[str, Stance]]
    refuting: set[str]  # ids of documents with an accepted refuting quote

    def accept(self, claim: Claim, answer: _QuotesAnswer, batch: _Batch) -> int:
        """Keep the valid quotes of answer; return how many were kept."""
        kept = 0
        for item in answer.quotes:
            stance = Stance(item.stance)
            known = [n for n in item.sentences if n in batch.numbered]
            if len(known) < len(item.sentences):
                _drop(claim, item.sentences, "no such sentence in the batch")
            for evidence, offset, text in batch.spans(known):
                kept += self._keep(claim, item.sentences, evidence, offset, text, stance)
        return kept

    def _keep(
        self,
        claim: Claim,
        numbers: list[int],
        evidence: Evidence,
        offset: int,
        text: str,
        stance: Stance,
    ) -> bool:
        if len(text.split()) < MIN_QUOTE_WORDS:
            _drop(claim, numbers, "too short")
            return False
        if any(q.evidence_id == evidence.id and q.text == text for _, _, q in self.quotes):
            _drop(claim, numbers, "duplicate")
            return False
        key = (evidence.document.id, stance)
        if self.per_document[key] >= CAPS[stance]:
            _drop(claim, numbers, f"over the cap of {CAPS[stance]} {stance} quotes")
            return False
        self.per_document[key] += 1
        if stance is Stance.REFUTES:
            self.refuting.add(evidence.document.id)
        quote = Quote(evidence_id=evidence.id, text=text, stance=stance)
        self.quotes.append((self.order[evidence.id], offset, quote))
        return True


async def extract_quotes(
    claim: Claim,
    evidence: Sequence[Evidence],
    *,
    llm: LLMClient,
    docs_per_call: int = 4,
    max_calls: int = 2,
    stop_after_refuting: int = 2,
    meter: UsageMeter | None = None,
) -> list[Quote]:
    """Quote the evidence paragraphs that refute, give context to or support a claim."""
    blocks = _group(evidence)
    order = {item.id: n for n, item in reversed(list(enumerate(evidence)))}
    gathered = _Gathered([], order, Counter(), set())
    size = max(1, docs_per_call)
    batches = [blocks[start : start + size] for start in range(0, len(blocks), size)]
    for call, blocks in enumerate(batches[: max(0, max_calls)]):
        if 0 < stop_after_refuting <= len(gathered.refuting):
            log.info(
                "extraction stopped early",
                extra={"stage": STAGE, "claim_id": claim.id, "calls": call},
            )
            break
        batch = _Batch.of(blocks)
        if not batch.numbered:
            continue
        user = "\n\n".join(
            [data_block("claim", claim.text, max_chars=MAX_CLAIM_CHARS), *batch.render()]
        )
        try:
            answer = await llm.complete(
                stage=STAGE,
                system=system_prompt(TASK),
                user=user,
                schema=_QuotesAnswer,
                json_schema=batch.schema(),
                # a quote is ~15 tokens; the schema bounds how many there can be
                max_tokens=64 + 16 * MAX_QUOTES_PER_DOCUMENT * len(blocks),
                meter=meter,
            )
        except (ModelOutputError, ModelUnavailableError) as exc:
            log.warning(
                "extraction model failed, keeping the quotes gathered so far",
                extra={"stage": STAGE, "claim_id": claim.id, "call": call, "reason": exc.reason},
            )
            count_fallback(STAGE, meter)
            break
        kept = gathered.accept(claim, answer, batch)
        log.info(
            "quotes extracted",
            extra={
                "stage": STAGE,
                "claim_id": claim.id,
                "call": call,
                "documents": len(blocks),
                "answered": len(answer.quotes),
                "kept": kept,
            },
        )
    return [quote for _, _, quote in sorted(gathered.quotes, key=lambda q: (q[0], q[1]))]
