"""Rendering stored checks for people (terminal) and programs (JSON)."""

from __future__ import annotations

from typing import Any

from pipeline.records import Check
from pipeline.reply.render import item_json, reference_json


def render_text(check: Check) -> str:
    """Return a check as plain text: correction, verdicts, references and timings."""
    lines = [check.correction.text, ""]
    if check.correction.references:
        lines.append("References:")
        lines += [f"  [{r.number}] {r.title} — {r.url}" for r in check.correction.references]
        lines.append("")
    lines.append(f"Verdict: {check.verdict.label.value}  (judge: {check.judge})")
    texts = {c.id: c.text for c in check.claims}
    for n, cv in enumerate(check.verdict.claims, start=1):
        lines.append(f"  claim {n}: {cv.label.value} — {texts.get(cv.claim_id, '')[:100]}")
        lines.append(f"           {cv.rationale}")
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
        },
        "verdict": check.verdict.label.value,
        "claims": [
            {
                "id": c.id,
                "text": c.text,
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
        },
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
