"""Image provenance in a check: earlier appearances of the post's photos, before the verdict.

The image stage read the post's images; here their earlier appearances in the image index
(`pipeline.image.provenance`) on stored pages of citable publishers become evidence of the
post's first claim, the claim its pictures illustrate, so the judges read them and the tiered
rule and the verdict rules decide on them (`pipeline.judge.tiered.out_of_context`). Matching
(numpy over the hash index), the index's queries and the gazetteer (loaded once, ~0.6 s) run
in the CPU pool.

Failure policy: never raises; no index, no image or no claim means no provenance evidence.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace

from pipeline.checking.stages import Stages
from pipeline.image.conflicts import day, event_frame
from pipeline.image.provenance import caption_excerpt, find_earlier, provenance_evidence
from pipeline.records.domain import Claim, Correction, Evidence, ImageTrace, Reference
from pipeline.records.image import ImageReport
from pipeline.reply.links import scrub_links
from pipeline.util.cpu import run_cpu

log = logging.getLogger(__name__)


async def trace_images(
    claims: list[Claim], images: ImageReport, *, stages: Stages
) -> list[Evidence]:
    """Return the provenance evidence of the post's images, on its first claim."""
    deps = stages.deps
    index = deps.images.index if deps.images is not None else None
    if index is None or not images.descriptions or not claims:
        return []
    post = stages.post
    text = " ".join(c.text for c in claims)

    def work() -> list[Evidence]:
        frame = event_frame(text, when=post.created_at or stages.before, reference=stages.reference)
        findings = find_earlier(
            images,
            index=index,
            documents=deps.index,
            rater=deps.rater,
            when=stages.before,
            frame=frame,
        )
        return provenance_evidence(findings, claim_id=claims[0].id)

    found = await stages.timed("provenance", run_cpu(deps.cpu, work))
    log.info(
        "image provenance",
        extra={
            "post_id": post.id,
            "found": len(found),
            "conflicts": sum(1 for e in found if e.image is not None and e.image.conflict),
        },
    )
    return found


def describe_findings(
    correction: Correction, evidence: Sequence[Evidence], *, event: str = ""
) -> Correction:
    """Return the correction with a sentence on each image trace the evidence holds.

    "This photo appeared on 3 May 2012 [2], captioned "Flooding in Bangkok", before the storm
    the post describes." (`event`: what the post describes, in a word.) Each sentence cites
    the trace's page by its number among the references, adding the page when the verdict did
    not cite it, so a reply cites only pages the pipeline retrieved and stored.
    """
    references = list(correction.references)
    notes = [correction.note] if correction.note else []
    said: set[str] = set()
    for item in evidence:
        trace = item.image
        if trace is None or trace.image_id in said:
            continue
        said.add(trace.image_id)
        document = item.document
        number = next((r.number for r in references if r.document_id == document.id), 0)
        if not number:
            number = len(references) + 1
            title = scrub_links(document.title) or document.domain
            references.append(Reference(number, document.id, document.url, title))
        notes.append(_sentence(trace, number, event or "events"))
    if not said:
        return correction
    return replace(correction, note=" ".join(notes), references=tuple(references))


def _sentence(trace: ImageTrace, number: int, event: str) -> str:
    when = f"on {day(trace.published_at)}" if trace.published_at else "earlier"
    caption = (
        f', captioned "{scrub_links(caption_excerpt(trace.caption))}"' if trace.caption else ""
    )
    if trace.conflict in ("place", "event"):
        shown = trace.detail.removeprefix("its caption places it in ")
        shown = shown.removeprefix("its caption names ")
        return f"This photo appeared {when} [{number}]{caption}: it shows {shown} as the post says."
    if trace.conflict == "date":
        return (
            f"This photo appeared {when} [{number}]{caption}, before the {event} the post "
            "describes."
        )
    return f"This photo also appeared {when} [{number}]{caption}."
