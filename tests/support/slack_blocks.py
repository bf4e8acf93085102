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
        elif kind == "actions":
            elements = block.get("elements") or []
            if not 0 < len(elements) <= 25:
                return f"block {n}: actions needs 1-25 elements"
            for element in elements:
                problem = _button_problem(element)
                if problem:
                    return f"block {n}: {problem}"
        elif kind == "input":
            label = block.get("label") or {}
            element = block.get("element") or {}
            if label.get("type") != "plain_text" or not 0 < len(label.get("text", "")) <= 2000:
                return f"block {n}: input label must be plain_text of 1-2000 characters"
            if element.get("type") != "plain_text_input" or not element.get("action_id"):
                return f"block {n}: input element must be a plain_text_input with an action_id"
            limit = int(element.get("max_length") or 3000)
            if limit > 3000 or len(element.get("initial_value") or "") > limit:
                return f"block {n}: plain_text_input initial_value longer than max_length"
        elif kind != "divider":
            return f"block {n}: unexpected block type {kind!r}"
    return None


def _button_problem(element: Any) -> str | None:
    """Return why Slack would refuse a button element, or None."""
    if element.get("type") != "button":
        return f"unexpected element type {element.get('type')!r}"
    text = element.get("text") or {}
    if text.get("type") != "plain_text" or not 0 < len(text.get("text", "")) <= 75:
        return "button text must be plain_text of 1-75 characters"
    if not 0 < len(element.get("action_id") or "") <= 255:
        return "button action_id must be 1-255 characters"
    if len(element.get("value") or "") > 2000:
        return "button value longer than 2000 characters"
    if element.get("style") not in (None, "primary", "danger"):
        return "button style must be primary or danger"
    return None
