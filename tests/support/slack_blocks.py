"""What Slack checks in Block Kit before it posts a message (`invalid_blocks` otherwise).

The stand-in Slack refuses what Slack would; the render tests use the same rules.
"""

from __future__ import annotations

from typing import Any

__all__ = ["block_problem"]


def block_problem(blocks: Any) -> str | None:
    """Return why Slack would refuse blocks (`invalid_blocks`), or None when they are valid."""
    if not isinstance(blocks, list):
        return "blocks must be a list"
    if len(blocks) > 50:
        return f"{len(blocks)} blocks (max 50)"
    for n, block in enumerate(blocks):
        kind = block.get("type")
        if kind == "header":
            text = block["text"]
            if text.get("type") != "plain_text" or not 0 < len(text["text"]) <= 150:
                return f"block {n}: header text must be plain_text of 1-150 characters"
        elif kind == "section":
            text = block.get("text") or {}
            if (
                text.get("type") not in ("mrkdwn", "plain_text")
                or not 0 < len(text["text"]) <= 3000
            ):
                return f"block {n}: section text must be 1-3000 characters"
        elif kind == "context":
            elements = block.get("elements") or []
            if not 0 < len(elements) <= 10:
                return f"block {n}: context needs 1-10 elements"
            for element in elements:
                if not 0 < len(element.get("text", "")) <= 3000:
                    return f"block {n}: context element text must be 1-3000 characters"
        elif kind != "divider":
            return f"block {n}: unexpected block type {kind!r}"
    return None
