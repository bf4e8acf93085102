"""The claim finder on posts in scripts without capitals or spaces: found, refused, per language.

`python -m bench.claim_languages` reads tests/fixtures/languages/claim_posts.jsonl
(real-looking posts in Arabic, Hindi, Chinese, Russian and Japanese, each marked checkable or
not), identifies each post's language (lingua), finds its claims without a language model
(`pipeline.claims.heuristic`) and identifies each claim's language. It prints, per language,
how many checkable posts gave claims all in the post's language and how many posts with
nothing to check (greetings, thanks, questions) were refused, then each miss.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from pipeline.checking.languages import identify_claims, identify_post
from pipeline.claims.heuristic import extract_claims
from pipeline.errors import EmptyPostError
from pipeline.inputs.language import LanguageIdentifier
from pipeline.inputs.posts import post_from_text

FIXTURE = (
    Path(__file__).resolve().parent.parent
    / "tests"
    / "fixtures"
    / "languages"
    / "claim_posts.jsonl"
)


def load(path: Path = FIXTURE) -> list[dict[str, Any]]:
    """Return the fixture's posts: language, checkable and text."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


async def outcome(text: str, identifier: LanguageIdentifier) -> tuple[list[str], str]:
    """Return the languages of the claims found in text, or no claims and the refusal."""
    post = await identify_post(post_from_text(text, max_chars=10_000), identifier)
    try:
        claims = await extract_claims(post)
    except EmptyPostError as exc:
        return [], str(exc)
    claims = await identify_claims(claims, post, identifier)
    return [c.language or "" for c in claims], ""


def right(row: dict[str, Any], languages: list[str]) -> bool:
    """Return whether a post's outcome is the expected one (zh-Hans reads zh)."""
    if not row["checkable"]:
        return not languages
    return bool(languages) and all(code.split("-")[0] == row["language"] for code in languages)


async def run() -> dict[str, Any]:
    """Return the counts per language and the misses."""
    identifier = LanguageIdentifier()
    counts: dict[str, dict[str, list[int]]] = {}
    misses = []
    for row in load():
        languages, refusal = await outcome(row["text"], identifier)
        kind = "checkable" if row["checkable"] else "refused"
        tally = counts.setdefault(row["language"], {"checkable": [0, 0], "refused": [0, 0]})[kind]
        tally[1] += 1
        if right(row, languages):
            tally[0] += 1
        else:
            misses.append({**row, "claims": languages, "refusal": refusal})
    return {"counts": counts, "misses": misses}


def main() -> None:
    """Print the figures."""
    report = asyncio.run(run())
    total = {"checkable": [0, 0], "refused": [0, 0]}
    print("language  checkable posts with claims  non-checkable posts refused")
    for language, kinds in report["counts"].items():
        for kind, (good, n) in kinds.items():
            total[kind][0] += good
            total[kind][1] += n
        (a, b), (c, d) = kinds["checkable"], kinds["refused"]
        print(f"{language:<9} {a:>3}/{b:<26} {c:>3}/{d}")
    (a, b), (c, d) = total["checkable"], total["refused"]
    print(f"{'all':<9} {a:>3}/{b:<26} {c:>3}/{d}")
    for miss in report["misses"]:
        print("miss:", json.dumps(miss, ensure_ascii=False))


if __name__ == "__main__":
    main()
