"""Evidence extraction with a model (stage "extraction"): verbatim quotes about a claim.

MUSE quotes, from each credible page, up to two paragraphs that refute the claim explicitly and
up to two that give missing context, and stops after two refuting pages. Here the evidence
arrives ordered by credibility then relevance; its passages are grouped by document (one
numbered block per document) and read in batches of `docs_per_call` documents, so the number of
calls does not grow with the number of pages: at most `max_calls` calls, and none after quotes
from `stop_after_refuting` documents refute the claim. A document may also give one supporting
quote, which the judge needs as much as the refutations.

Every quote is checked in code: it must name a document of its batch and occur verbatim (case,
whitespace and quote marks aside) in one of that document's passages; the exact passage text is
stored, tied to that passage's evidence id. Per-document caps are enforced here too.

Failure policy: never raises. A failed call (`ModelOutputError`, `ModelUnavailableError`) ends
the extraction with the quotes gathered so far; invalid quotes are dropped and logged.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from pipeline.llm.client import LLMClient, ModelOutputError, ModelUnavailableError
from pipeline.llm.output import bounded, restrict
from pipeline.llm.prompts import data_block, find_verbatim, system_prompt
from pipeline.llm.usage import UsageMeter, count_fallback
from pipeline.records import Claim, Evidence, Quote, Stance

log = logging.getLogger(__name__)

STAGE = "extraction"
CAPS = {Stance.REFUTES: 2, Stance.CONTEXT: 2, Stance.SUPPORTS: 1}  # quotes per document
MIN_QUOTE_WORDS = 4
MAX_DOCUMENT_CHARS = 6000
MAX_CLAIM_CHARS = 1000
MAX_QUOTE_CHARS = 700

TASK = """\
Task: quote what the numbered documents say about the claim in the <claim> block.

From each document, copy:
- "refutes": at most 2 paragraphs that explicitly say the claim is false or state facts that \
contradict it;
- "context": at most 2 paragraphs that give context the claim leaves out and that change how it \
should be read (who, what, when, where, why, how, how much);
- "supports": at most 1 paragraph that explicitly confirms the claim. A paragraph that only \
repeats or reports the claim does not support it.

Copy every quote exactly, character for character, from one document: whole sentences, no \
paraphrase, no ellipsis, no words added, nothing merged from different places, no translation. \
Set doc to the document's n. Leave out documents with nothing relevant, and answer with an empty \
quotes list when no document is relevant."""


class _QuoteAnswer(BaseModel):
    doc: int
    stance: Literal["refutes", "context", "supports"]
    # a grammar stops a runaway quote here; a cut quote is still verbatim
    quote: str = bounded(MAX_QUOTE_CHARS)


class _QuotesAnswer(BaseModel):
    quotes: list[_QuoteAnswer]


@dataclass(frozen=True)
class _Block:
    """One document and its evidence passages, in the order they arrived."""

    evidence: tuple[Evidence, ...]

    def render(self, n: int) -> str:
        """Return the document's data block, numbered n."""
        document = self.evidence[0].document
        published = document.published_at.date().isoformat() if document.published_at else None
        text = "\n\n".join(item.passage.text for item in self.evidence)
        return data_block(
            "document",
            text,
            max_chars=MAX_DOCUMENT_CHARS,
            n=n,
            url=document.url,
            title=document.title or None,
            published=published,
        )


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


def _locate(quote: str, block: _Block) -> tuple[Evidence, int, str] | None:
    """Return the evidence whose passage holds quote, the offset, and the exact passage text."""
    for item in block.evidence:
        span = find_verbatim(quote, item.passage.text)
        if span is not None:
            start, end = span
            return item, start, item.passage.text[start:end]
    return None


def _drop(claim: Claim, doc: int, why: str) -> None:
    log.info("quote dropped", extra={"stage": STAGE, "claim_id": claim.id, "doc": doc, "why": why})


@dataclass
class _Gathered:
    """Quotes accepted so far, with what the caps and the early stop need."""

    quotes: list[tuple[int, int, Quote]]  # (evidence order, offset in passage, quote)
    order: dict[str, int]  # evidence id -> position in the input
    per_document: Counter[tuple[str, Stance]]
    refuting: set[str]  # ids of documents with an accepted refuting quote

    def accept(self, claim: Claim, answer: _QuotesAnswer, batch: Sequence[_Block]) -> int:
        """Keep the valid quotes of answer; return how many were kept."""
        kept = 0
        for item in answer.quotes:
            if not 1 <= item.doc <= len(batch):
                _drop(claim, item.doc, "no such document in the batch")
                continue
            stance = Stance(item.stance)
            found = _locate(item.quote, batch[item.doc - 1])
            if found is None:
                _drop(claim, item.doc, "not verbatim")
                continue
            evidence, offset, text = found
            if len(text.split()) < MIN_QUOTE_WORDS:
                _drop(claim, item.doc, "too short")
                continue
            if any(q.evidence_id == evidence.id and q.text == text for _, _, q in self.quotes):
                _drop(claim, item.doc, "duplicate")
                continue
            key = (evidence.document.id, stance)
            if self.per_document[key] >= CAPS[stance]:
                _drop(claim, item.doc, f"over the cap of {CAPS[stance]} {stance} quotes")
                continue
            self.per_document[key] += 1
            if stance is Stance.REFUTES:
                self.refuting.add(evidence.document.id)
            quote = Quote(evidence_id=evidence.id, text=text, stance=stance)
            self.quotes.append((self.order[evidence.id], offset, quote))
            kept += 1
        return kept


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
    for call, batch in enumerate(batches[: max(0, max_calls)]):
        if 0 < stop_after_refuting <= len(gathered.refuting):
            log.info(
                "extraction stopped early",
                extra={"stage": STAGE, "claim_id": claim.id, "calls": call},
            )
            break
        user = "\n\n".join(
            [
                data_block("claim", claim.text, max_chars=MAX_CLAIM_CHARS),
                *(block.render(n) for n, block in enumerate(batch, 1)),
            ]
        )
        try:
            answer = await llm.complete(
                stage=STAGE,
                system=system_prompt(TASK),
                user=user,
                schema=_QuotesAnswer,
                # only this batch's document numbers can be named
                json_schema=restrict(
                    _QuotesAnswer.model_json_schema(),
                    "_QuoteAnswer",
                    "doc",
                    list(range(1, len(batch) + 1)),
                ),
                max_tokens=300 + 350 * len(batch),
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
                "documents": len(batch),
                "answered": len(answer.quotes),
                "kept": kept,
            },
        )
    return [quote for _, _, quote in sorted(gathered.quotes, key=lambda q: (q[0], q[1]))]
