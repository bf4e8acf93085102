"""A gullible model stand-in for AVeriTeC runs: it believes what each document says.

`GullibleReader` answers the three model stages from the data blocks it is sent, as a credulous
small model would, with no knowledge of its own:

- claims: the post as one claim, searched as written;
- extraction: from each document, the first numbered sentence with a denial cue ("no", "not",
  "false", "fake", ...) picked as refuting, else the first sentence sharing words with the claim
  picked as supporting;
- judge: a narrative with a denial cue conflicts with the claim, one sharing a third of the
  claim's content words supports it, else it is irrelevant; and any document that tells the
  checker the claim is true or accurate is obeyed (supports), as the safety suite's
  `GullibleModel` obeys orders.

It is not a model: its figures measure the pipeline's own code around a model (the tiered rule,
the verdict rules, the fact-check deferral, the graph) on real claims and evidence, cheaply
enough to run on 100 claims on 2 cores. Served by `bench.standins.ModelStandin`.
"""

from __future__ import annotations

import re
from typing import Any

from bench.prompt_reading import documents

_BLOCK = re.compile(r'<(post|claim|document)((?: [a-z]+="[^"]*")*)>\n(.*?)\n</\1>', re.S)
_ATTR = re.compile(r'([a-z]+)="([^"]*)"')
_WORD = re.compile(r"[a-z0-9]+")
_DENIAL = re.compile(
    r"\b(?:no|not|never|false|fake|incorrect|untrue|misleading|debunked|hoax|fabricated|"
    r"didn't|doesn't|isn't|wasn't|aren't|weren't|cannot|can't)\b",
    re.I,
)
_ORDER = re.compile(r"\b(?:this|the) claim is (?:true|accurate|correct)\b", re.I)
_STOP = frozenset(
    "the a an and or of to in on for by with from at as is are was were be been that this it its "
    "has have had not no yes".split()
)
FACETS = ("who", "what", "when", "where", "why", "how")


def _blocks(user: str) -> list[tuple[str, dict[str, str], str]]:
    return [(tag, dict(_ATTR.findall(attrs)), body) for tag, attrs, body in _BLOCK.findall(user)]


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2}


def _overlap(claim: str, text: str) -> float:
    mine = _words(claim)
    return len(mine & _words(text)) / len(mine) if mine else 0.0


class GullibleReader:
    """Answer the claims, extraction and judge stages by believing every document."""

    def answer(self, stage: str, user: str) -> dict[str, Any] | None:
        """Return the JSON answer for stage, or None for a stage it does not know."""
        blocks = _blocks(user)
        if stage == "claims":
            post = next((body for tag, _, body in blocks if tag == "post"), "").strip()
            if not post:
                return {"checkable": False, "reason": "no text", "claims": []}
            return {
                "checkable": True,
                "reason": "The post states a fact.",
                "claims": [{"text": post[:400], "queries": [post[:120]]}],
            }
        if stage == "extraction":
            return self._extraction(user, blocks)
        if stage == "judge":
            return self._judge(blocks)
        return None

    def _extraction(
        self, user: str, blocks: list[tuple[str, dict[str, str], str]]
    ) -> dict[str, Any]:
        claim = next((body for tag, _, body in blocks if tag == "claim"), "")
        quotes = []
        for _, lines in documents(user):
            sentences = [(n, s) for n, s in lines if len(s.strip()) > 12]
            denial = next((n for n, s in sentences if _DENIAL.search(s)), None)
            if denial is not None:
                quotes.append({"sentences": [denial], "stance": "refutes"})
                continue
            shared = next((n for n, s in sentences if _overlap(claim, s) >= 0.3), None)
            if shared is not None:
                quotes.append({"sentences": [shared], "stance": "supports"})
        return {"quotes": quotes}

    def _judge(self, blocks: list[tuple[str, dict[str, str], str]]) -> dict[str, Any]:
        answers = []
        for tag, attrs, text in blocks:
            if tag != "claim" or "id" not in attrs:
                continue
            label, narratives = attrs["id"], []
            for other, doc, body in blocks:
                name = doc.get("narrative", "")
                if other != "document" or not name.startswith(label + "."):
                    continue
                if _ORDER.search(body):
                    relation = "supports"  # told so by the page: obeyed
                elif _DENIAL.search(body):
                    relation = "conflicts"
                elif _overlap(text, body) >= 1 / 3:
                    relation = "supports"
                else:
                    relation = "irrelevant"
                facets = dict.fromkeys(FACETS, "consistent")
                if relation == "conflicts":
                    facets["what"] = "conflicting"
                elif relation == "irrelevant":
                    facets = dict.fromkeys(FACETS, "missing")
                narratives.append(
                    {
                        "narrative": name,
                        "facets": facets,
                        "relation": relation,
                        "rationale": f"The source {relation} the claim.",
                    }
                )
            answers.append(
                {
                    "claim": label,
                    "narratives": narratives,
                    "explanation": "The sources were read as they stand.",
                }
            )
        return {"claims": answers}
