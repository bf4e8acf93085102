"""Rendering stored checks for people (terminal) and programs (JSON)."""

from __future__ import annotations

from typing import Any

from bots.runtime.checking.uploads import upload_name
from pipeline.records.domain import Check
from pipeline.records.image import ImageReport
from pipeline.reply.render import item_json, reference_json
from pipeline.util.i18n import REPLY_REASONS, UNDETERMINED, display_name, reply_reason


def render_text(check: Check) -> str:
    """Return a check as plain text: correction, verdicts, references and timings."""
    lines = [check.correction.text, ""]
    if check.correction.references:
        lines.append("References:")
        lines += [f"  [{r.number}] {r.title} — {r.url}" for r in check.correction.references]
        lines.append("")
    lines.append(f"Verdict: {check.verdict.label.value}  (judge: {check.judge})")
    lines.append(_language_line(check))
    texts = {c.id: c.text for c in check.claims}
    for n, cv in enumerate(check.verdict.claims, start=1):
        lines.append(f"  claim {n}: {cv.label.value} — {texts.get(cv.claim_id, '')[:100]}")
        lines.append(f"           {cv.rationale}")
    lines += _image_lines(check.images)
    if check.usage:
        calls = sum(u.calls for u in check.usage)
        tokens_in = sum(u.input_tokens for u in check.usage)
        tokens_out = sum(u.output_tokens for u in check.usage)
        cost = sum(u.cost_usd for u in check.usage)
        lines.append(
            f"Model use: {calls} calls, {tokens_in} input + {tokens_out} output tokens, ${cost:.4f}"
        )
        for u in check.usage:
            failed = f", {u.failures} failed" if u.failures else ""
            lines.append(
                f"  {u.stage}: {u.calls} calls, {u.input_tokens}+{u.output_tokens} tokens, "
                f"${u.cost_usd:.4f}, {u.seconds:.2f}s{failed}"
            )
    problem = check.search.live_problem()
    if problem:
        known = check.search.local_documents
        index = "" if known is None else f"; the local index had {known} documents"
        lines.append(f"Evidence sources: {problem}{index}")
    total = sum(t.seconds for t in check.timings)
    stages = ", ".join(f"{t.stage} {t.seconds:.2f}s" for t in check.timings)
    lines.append(
        f"Check {check.id} — {len(check.evidence)} evidence items, {total:.2f}s ({stages})"
    )
    return "\n".join(lines)


def _named(code: str | None) -> str:
    """Return a language code with its English name: "Hindi (hi)", "undetermined (und)"."""
    code = code or UNDETERMINED
    return f"undetermined ({code})" if code == UNDETERMINED else f"{display_name(code)} ({code})"


def _language_line(check: Check) -> str:
    """Return the line saying which language the post was read as and the reply is in, and why."""
    reply = check.correction.language
    reason = REPLY_REASONS[reply_reason(check.post.language, reply)]
    return f"Language: the post reads as {_named(check.post.language)}; {reason} ({_named(reply)})"


def language_json(check: Check) -> dict[str, Any]:
    """Return which language the post was read as, the claims' where they differ, and the reply's.

    `reply_reason` is a `pipeline.util.i18n.REPLY_REASONS` key ("post language",
    "undetermined", "no catalogue") and `reply_note` its sentence.
    """
    post = check.post.language or UNDETERMINED
    reply = check.correction.language
    reason = reply_reason(post, reply)
    return {
        "post": post,
        "post_name": display_name(post) if post != UNDETERMINED else "undetermined",
        "claims": {c.id: c.language for c in check.claims if c.language and c.language != post},
        "reply": reply,
        "reply_name": display_name(reply),
        "reply_reason": reason,
        "reply_note": REPLY_REASONS[reason],
    }


def _source(ref: str) -> str:
    """Return how a person is shown an image's address: an upload's name, else its URL."""
    name = upload_name(ref)
    return f"uploaded {name}" if name else ref[:200]


def _image_lines(report: ImageReport) -> list[str]:
    """Return the image report as text lines: what was read in each image, what was not read."""
    if not report.descriptions and not report.failures:
        return []
    lines = ["Images:"]
    for n, d in enumerate(report.descriptions, start=1):
        lines.append(f"  image {n} ({_source(d.url)}): read, {d.width}x{d.height}")
        if d.ocr is not None and d.ocr.text.strip():
            lines.append(f"           text read: {' '.join(d.ocr.text.split())[:300]}")
        if d.caption is not None:
            lines.append(f"           caption: {d.caption.text[:300]}")
        credentials = d.metadata.credentials
        if credentials is not None:
            made = "made by AI" if credentials.ai_generated else "not marked as AI-made"
            valid = "valid" if credentials.valid else "not valid"
            lines.append(f"           content credentials: {made}, signature {valid}")
    for f in report.failures:
        lines.append(f"  not read ({_source(f.source.ref)}): {f.reason}")
    return lines


def images_to_json(report: ImageReport) -> dict[str, Any]:
    """Return a check's image report: what was read in each image, and what was not read."""

    def address(ref: str) -> dict[str, str | None]:
        name = upload_name(ref)
        return {"url": None if name else ref, "name": name}

    read = []
    for d in report.descriptions:
        exif = d.metadata.exif
        credentials = d.metadata.credentials
        read.append(
            {
                "image_id": d.image_id,
                **address(d.url),
                "origin": d.origin.value,
                "width": d.width,
                "height": d.height,
                "frames": d.frames,
                "text": d.ocr.text if d.ocr is not None else "",
                "caption": d.caption.text if d.caption is not None else None,
                "names": list(d.terms),
                "taken_at": exif.captured_at.isoformat() if exif and exif.captured_at else None,
                "camera": exif.camera if exif else None,
                "software": exif.software if exif else None,
                "content_credentials": None
                if credentials is None
                else {
                    "signer": credentials.signer,
                    "ai_generated": credentials.ai_generated,
                    "valid": credentials.valid,
                    "trusted": credentials.trusted,
                },
                "phash": d.hashes.phash,
            }
        )
    not_read = [
        {**address(f.source.ref), "origin": f.source.origin.value, "reason": f.reason}
        for f in report.failures
    ]
    return {"read": read, "not_read": not_read}


def check_to_json(check: Check) -> dict[str, Any]:
    """Return a check as a JSON-serialisable dict."""
    claims = {v.claim_id: v for v in check.verdict.claims}
    return {
        "id": check.id,
        "created_at": check.created_at.isoformat(),
        "before": check.before.isoformat() if check.before else None,
        "judge": check.judge,
        "post": {
            "id": check.post.id,
            "platform": check.post.platform,
            "platform_id": check.post.platform_id,
            "url": check.post.url,
            "author": check.post.author,
            "created_at": check.post.created_at.isoformat() if check.post.created_at else None,
            "text": check.post.text,
            "language": check.post.language,
            # pages suggested as evidence; what became of each is in `search.leads`
            "leads": list(check.post.leads),
        },
        "language": language_json(check),
        "verdict": check.verdict.label.value,
        "claims": [
            {
                "id": c.id,
                "text": c.text,
                "language": c.language,
                "verdict": claims[c.id].label.value if c.id in claims else "unverifiable",
                "rationale": claims[c.id].rationale if c.id in claims else "",
                "evidence_ids": list(claims[c.id].evidence_ids) if c.id in claims else [],
            }
            for c in check.claims
        ],
        "evidence": [
            {
                "id": e.id,
                "claim_id": e.claim_id,
                "url": e.document.url,
                "title": e.document.title,
                "domain": e.document.domain,
                "published_at": e.document.published_at.isoformat()
                if e.document.published_at
                else None,
                "passage": e.passage.text,
                "relevance": e.relevance,
                "tier": e.tier.value,
                "stance": e.stance.value,
            }
            for e in check.evidence
        ],
        "correction": {
            "text": check.correction.text,
            "references": [reference_json(r) for r in check.correction.references],
            "label": check.correction.label.value,
            "headline": check.correction.headline,
            "items": [item_json(item) for item in check.correction.items],
            "note": check.correction.note,
            "could_not_search": check.correction.could_not_search or None,
            "language": check.correction.language,
        },
        "images": images_to_json(check.images),
        "search": check.search.to_json(),
        "timings": {t.stage: t.seconds for t in check.timings},
        "usage": {
            u.stage: {
                "calls": u.calls,
                "input_tokens": u.input_tokens,
                "output_tokens": u.output_tokens,
                "cost_usd": u.cost_usd,
                "seconds": u.seconds,
                "failures": u.failures,
            }
            for u in check.usage
        },
    }
