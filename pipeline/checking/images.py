"""Image provenance in a check: earlier appearances of the post's photos, before the verdict.

The image stage read the post's images; here their earlier appearances in the image index
(`pipeline.image.provenance`) on stored pages of citable publishers become evidence of the
post's first claim, the claim its pictures illustrate, so the judges read them and the tiered
rule and the verdict rules decide on them (`pipeline.judge.tiered.out_of_context`). Matching
(numpy over the hash index), the index's queries and the gazetteer (loaded once, ~0.6 s) run
in the CPU pool.

The sentences a reply says about the post's images (`describe_findings`, `image_note`) are
gettext messages in the reply's language. A conflict's details and an unread image's reason are
English words from the image stage: English replies quote them, other languages say the same
in a translated sentence without them.

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
from pipeline.util.i18n import N_, SOURCE_LANGUAGE, Translator, translator

log = logging.getLogger(__name__)

# What a reply that is not English says about an earlier appearance of a photo, by whether it
# is dated (the conflict's details are English words, so they are not quoted).
APPEARED_ELSEWHERE = {
    True: N_(
        "This photo appeared on {date} [{number}]{caption}: not the place or event the post "
        "describes."
    ),
    False: N_(
        "This photo appeared earlier [{number}]{caption}: not the place or event the post "
        "describes."
    ),
}
APPEARED_BEFORE = {
    True: N_(
        "This photo appeared on {date} [{number}]{caption}, before the events the post describes."
    ),
    False: N_(
        "This photo appeared earlier [{number}]{caption}, before the events the post describes."
    ),
}
APPEARED_ALSO = {
    True: N_("This photo also appeared on {date} [{number}]{caption}."),
    False: N_("This photo also appeared earlier [{number}]{caption}."),
}
CAPTIONED = N_(', captioned "{caption}"')


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


def image_note(images: ImageReport, t: Translator | None = None) -> str:
    """Return what the reply says about images that could not be read, or ''."""
    t = t or translator(SOURCE_LANGUAGE)
    if not images.failures:
        return ""
    if t.language == SOURCE_LANGUAGE:
        return images.note
    return t.ngettext(
        "The image could not be read.", "{n} images could not be read.", len(images.failures)
    )


def describe_findings(
    correction: Correction,
    evidence: Sequence[Evidence],
    *,
    event: str = "",
    t: Translator | None = None,
) -> Correction:
    """Return the correction with a sentence on each image trace the evidence holds.

    "This photo appeared on 3 May 2012 [2], captioned "Flooding in Bangkok", before the storm
    the post describes." (`event`: what the post describes, in a word.) Each sentence cites
    the trace's page by its number among the references, adding the page when the verdict did
    not cite it, so a reply cites only pages the pipeline retrieved and stored. `t` is the
    reply's translator (None: English).
    """
    t = t or translator(SOURCE_LANGUAGE)
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
        notes.append(_sentence(t, trace, number, event or "events"))
    if not said:
        return correction
    return replace(correction, note=t.space.join(notes), references=tuple(references))


def _sentence(t: Translator, trace: ImageTrace, number: int, event: str) -> str:
    if t.language != SOURCE_LANGUAGE:
        return _translated_sentence(t, trace, number)
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


def _translated_sentence(t: Translator, trace: ImageTrace, number: int) -> str:
    """Return the sentence on one image trace in a language other than English."""
    dated = trace.published_at is not None
    when = t.date(trace.published_at.date()) if trace.published_at is not None else ""
    caption = ""
    if trace.caption:
        caption = t.gettext(CAPTIONED, caption=scrub_links(caption_excerpt(trace.caption)))
    if trace.conflict in ("place", "event"):
        message = APPEARED_ELSEWHERE[dated]
    elif trace.conflict == "date":
        message = APPEARED_BEFORE[dated]
    else:
        message = APPEARED_ALSO[dated]
    return t.gettext(message, date=when, number=number, caption=caption)
