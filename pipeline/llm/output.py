"""Model output schemas: the response_format to ask for, and parsing what comes back.

Output is only ever parsed as JSON and validated by pydantic (`model_validate_json`); nothing a
model writes is evaluated. Small models wrap JSON in markdown fences, so fences are stripped.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from pydantic import BaseModel, Field, ValidationError

if TYPE_CHECKING:  # types only: the SDK is not needed to build a request
    from openai.types.chat.completion_create_params import ResponseFormat

T = TypeVar("T", bound=BaseModel)

_FENCED = re.compile(r"```[ \t]*[A-Za-z0-9_+-]*[ \t]*\r?\n?(.*?)```", re.DOTALL)
_OPENING_FENCE = re.compile(r"```[ \t]*[A-Za-z0-9_+-]*[ \t]*\r?\n?")
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_MAX_ERRORS = 3
# length and count bounds steer a grammar; strict structured output may reject them
_NOT_STRICT = ("maxLength", "minLength", "maxItems", "minItems")


def strip_fences(text: str) -> str:
    """Return text without the markdown code fence (and prose) around a JSON answer."""
    stripped = text.strip()
    if stripped.startswith(("{", "[")):
        return stripped
    fenced = _FENCED.search(stripped)
    if fenced:
        return fenced.group(1).strip()
    opening = _OPENING_FENCE.match(stripped)  # an answer cut off before its closing fence
    if opening:
        return stripped[opening.end() :].strip()
    return stripped


def parse_output(text: str, schema: type[T]) -> T:
    """Validate a model's text answer against schema; raise pydantic's ValidationError.

    A raw newline or tab inside a JSON string is invalid JSON, but small models (and llama.cpp's
    JSON grammar) write them; such an answer is read leniently rather than asked for again.
    """
    body = strip_fences(text)
    try:
        return schema.model_validate_json(body)
    except ValidationError as exc:
        if not any(e["type"] == "json_invalid" for e in exc.errors()):
            raise
        try:
            lenient = json.loads(body, strict=False)
        except ValueError:
            raise exc from None
        return schema.model_validate(lenient)


def describe_invalid(exc: ValidationError) -> str:
    """Return a short account of why output failed validation, without the output itself."""
    errors = exc.errors(include_url=False, include_input=False)
    if any(error["type"] == "json_invalid" for error in errors):
        return f"not valid JSON ({errors[0]['msg']})"
    parts = []
    for error in errors[:_MAX_ERRORS]:
        where = ".".join(str(part) for part in error["loc"]) or "(root)"
        parts.append(f"{where}: {error['msg']}")
    more = f" and {len(errors) - _MAX_ERRORS} more" if len(errors) > _MAX_ERRORS else ""
    return "does not match the schema: " + "; ".join(parts) + more


def schema_name(schema: type[BaseModel]) -> str:
    """Return schema's name in the form response_format accepts (a-z, 0-9, _ and -; 64 max)."""
    return _NAME_UNSAFE.sub("_", schema.__name__)[:64] or "output"


def strict_json_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Return a copy of a JSON schema made fit for strict structured output.

    Every object gets `additionalProperties: false` and lists all its properties as required
    (fields with defaults must then be written out, which validation still accepts).
    """
    strict: dict[str, Any] = _strictify(copy.deepcopy(schema))
    return strict


def _strictify(node: Any) -> Any:
    if isinstance(node, list):
        return [_strictify(item) for item in node]
    if not isinstance(node, dict):
        return node
    if node.get("type") == "object":
        node.setdefault("additionalProperties", False)
        properties = node.get("properties")
        if isinstance(properties, dict):
            node["required"] = list(properties)
    if "default" in node and node["default"] is None:
        del node["default"]
    for key in _NOT_STRICT:
        node.pop(key, None)
    for key in ("properties", "$defs", "definitions"):
        if isinstance(node.get(key), dict):
            node[key] = {name: _strictify(sub) for name, sub in node[key].items()}
    for key in ("items", "anyOf", "allOf", "oneOf", "prefixItems"):
        if key in node:
            node[key] = _strictify(node[key])
    return node


def response_format(
    schema: type[BaseModel],
    *,
    json_schema: bool,
    strict: bool,
    schema_in_json_object: bool = False,
    body: dict[str, Any] | None = None,
) -> ResponseFormat:
    """Return the response_format that asks for schema.

    json_schema: OpenAI's structured output. Else `json_object`, carrying the schema when the
    endpoint turns it into a grammar (llama-cpp-python), else plain JSON mode. `body` is the
    JSON schema to send when it is narrower than the pydantic model's own (see `restrict`).
    """
    body = body if body is not None else schema.model_json_schema()
    if not json_schema:
        if schema_in_json_object:
            # not in the SDK's type: llama-cpp-python's extension of JSON mode
            return cast("ResponseFormat", {"type": "json_object", "schema": body})
        return {"type": "json_object"}
    return {
        "type": "json_schema",
        "json_schema": {
            "name": schema_name(schema),
            "schema": strict_json_schema(body) if strict else body,
            "strict": strict,
        },
    }


def restrict(
    body: dict[str, Any], definition: str, field: str, values: Sequence[str | int]
) -> dict[str, Any]:
    """Return a copy of a JSON schema whose `definition.field` may only be one of values.

    The schema sent for one call can name the only labels that call allows (the claim and
    narrative labels of its prompt): a grammar or structured output then cannot invent others.
    `definition` is a `$defs` entry, or "" for the root object.
    """
    narrowed = copy.deepcopy(body)
    node = narrowed if not definition else narrowed.get("$defs", {}).get(definition)
    if not isinstance(node, dict) or field not in node.get("properties", {}):
        raise KeyError(f"{definition or 'root'}.{field} is not in the schema")
    old = node["properties"][field]
    node["properties"][field] = {
        key: old[key] for key in ("title", "description") if key in old
    } | one_of(values)
    return narrowed


def one_of(values: Sequence[str | int]) -> dict[str, Any]:
    """Return the JSON schema of a value that must be one of values (strings or integers)."""
    kind = "integer" if all(isinstance(v, int) for v in values) else "string"
    return {"type": kind, "enum": list(values)}


def bounded(chars: int) -> Any:
    """Return a pydantic string field whose JSON schema caps its length.

    The cap steers the model (a llama.cpp grammar stops there); it is not enforced on reading,
    so a longer answer from an endpoint without a grammar is still accepted and trimmed in code.
    """
    return Field(json_schema_extra={"maxLength": chars})


# Titles only restate a property's name and object descriptions are class docstrings: the
# schema a prompt shows drops them, as every token is paid for on every call.


def compact_schema(node: Any) -> Any:
    """Return a JSON Schema without titles and object descriptions (property names stay).

    A property's own description is kept: it can say what the field means. Keys inside
    `properties` and `$defs` are names, never keywords, so a field called "title" survives.
    """
    if isinstance(node, list):
        return [compact_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("properties", "$defs") and isinstance(value, dict):
            out[key] = {name: compact_schema(sub) for name, sub in value.items()}
        elif key == "title" or (key == "description" and node.get("type") == "object"):
            continue
        else:
            out[key] = compact_schema(value)
    return out


def schema_instructions(schema: type[BaseModel]) -> str:
    """Return the system-prompt text that describes schema to a model without json_schema."""
    body = json.dumps(
        compact_schema(schema.model_json_schema()), ensure_ascii=False, separators=(",", ":")
    )
    return (
        "Answer with one JSON object only: no prose and no markdown code fences. "
        f"It must match this JSON Schema:\n{body}"
    )


def correction_note(reason: str, *, truncated: bool) -> str:
    """Return the message that asks the model to answer again after invalid output."""
    if truncated:
        return (
            "Your previous answer was cut off before the JSON was complete. Answer again, "
            "more briefly, with one complete JSON object that matches the schema."
        )
    return (
        f"Your previous answer was invalid: {reason}. Answer again with one JSON object "
        "only, matching the schema exactly."
    )
