"""English claims read as another language or `und`, on public claim sets (issue 51).

`python -m bench.english_claims` reads the English claims of the public sets under
`../shared/data` (AVeriTeC dev and train, PolitiFact's and Snopes' rated claims from CheckThat!
2022, the debate sentences of CheckThat! 2B) and identifies each one as `factbot check` does:
the post (the claim alone) first, then the claim with the post's language as the hint. A claim
read as anything but English is one the English-only stance model is kept off (`und` too). It
reports, per set, the claims, those not read as English and their codes, and with `--show` each
of them. A few of these claims are not English (PolitiFact quotes Spanish speakers): the count
is an upper bound of the misreadings.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pipeline.inputs.language import UNDETERMINED, LanguageIdentifier

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def _feed(path: Path) -> list[str]:
    feed = json.loads(path.read_text(encoding="utf-8"))
    return [e["item"][0]["claimReviewed"] for e in feed["dataFeedElement"]]


def _averitec(path: Path) -> list[str]:
    return [c["claim"] for c in json.loads(path.read_text(encoding="utf-8"))]


def _sentences(*paths: Path) -> list[str]:
    return [json.loads(line)["text"] for p in paths for line in p.open(encoding="utf-8")]


SETS: dict[str, Callable[[Path], list[str]]] = {
    "averitec-dev": lambda d: _averitec(d / "eval" / "averitec" / "dev.json"),
    "averitec-train": lambda d: _averitec(d / "train" / "averitec" / "train.json"),
    "politifact": lambda d: _feed(d / "eval" / "checkthat2b" / "politifact_feed.json"),
    "snopes": lambda d: _feed(d / "eval" / "checkthat2a" / "snopes_feed.json"),
    "debates": lambda d: _sentences(
        *(d / "eval" / "checkthat2b" / f"{part}.jsonl" for part in ("train", "dev"))
    ),
}


def read_as(identifier: LanguageIdentifier, text: str) -> str:
    """Return the language a claim given alone to `factbot check` is read as."""
    post = identifier.identify(text).code
    return identifier.identify(text, hint=None if post == UNDETERMINED else post).code


def run(claims: Iterable[str], identifier: LanguageIdentifier) -> dict[str, Any]:
    """Return how many claims there are, those not read as English, by code, and each one."""
    texts = [t for t in claims if t and t.strip()]
    misread = [(code, t) for t in texts if (code := read_as(identifier, t)) != "en"]
    return {
        "claims": len(texts),
        "not_english": len(misread),
        "codes": dict(Counter(code for code, _ in misread).most_common()),
        "misread": [{"code": code, "text": t} for code, t in misread],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the shared data folder")
    parser.add_argument("--show", action="store_true", help="list every misread claim")
    args = parser.parse_args()
    identifier = LanguageIdentifier()
    identifier.warm()
    report: dict[str, Any] = {}
    for name, read in SETS.items():
        started = time.perf_counter()
        figures = run(read(args.data), identifier)
        if not args.show:
            figures.pop("misread")
        report[name] = {**figures, "seconds": round(time.perf_counter() - started, 1)}
    print(json.dumps(report, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
