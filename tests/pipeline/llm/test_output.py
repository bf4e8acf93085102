"""Parsing model output: fences, validation errors, strict schemas."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field, ValidationError

from pipeline.llm.output import (
    describe_invalid,
    parse_output,
    restrict,
    strict_json_schema,
    strip_fences,
)


class Inner(BaseModel):
    text: str
    score: float = 0.0


class Outer(BaseModel):
    items: list[Inner]
    note: str | None = None
    count: int = Field(default=1, ge=0)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"a": 1}', '{"a": 1}'),
        ('```json\n{"a": 1}\n```', '{"a": 1}'),
        ('```\n{"a": 1}```', '{"a": 1}'),
        ("Sure:\n```json\n[1, 2]\n```\nHope this helps.", "[1, 2]"),
        ('```json\n{"a": "cut', '{"a": "cut'),
        ("no json at all", "no json at all"),
    ],
)
def test_strip_fences(raw: str, expected: str) -> None:
    assert strip_fences(raw) == expected


def test_parse_output_validates_and_never_evaluates() -> None:
    parsed = parse_output('```json\n{"items": [{"text": "a"}]}\n```', Outer)
    assert parsed == Outer(items=[Inner(text="a")])
    with pytest.raises(ValidationError):
        parse_output("__import__('os').getcwd()", Outer)


def test_describe_invalid_names_the_fields_not_the_output() -> None:
    with pytest.raises(ValidationError) as caught:
        parse_output('{"items": [{"score": "secret-ish"}], "count": -1}', Outer)
    reason = describe_invalid(caught.value)
    assert reason.startswith("does not match the schema: items.0.text: Field required")
    assert "count" in reason
    assert "secret-ish" not in reason


def test_strict_schema_closes_objects_and_requires_every_field() -> None:
    original = Outer.model_json_schema()
    strict = strict_json_schema(original)
    assert strict["additionalProperties"] is False
    assert strict["required"] == ["items", "note", "count"]
    inner = strict["$defs"]["Inner"]
    assert inner["additionalProperties"] is False and inner["required"] == ["text", "score"]
    assert "default" not in strict["properties"]["note"]
    assert "additionalProperties" not in original  # the input is not changed


def test_restrict_narrows_one_field_to_the_given_labels() -> None:
    original = Outer.model_json_schema()
    narrowed = restrict(original, "Inner", "text", ["A7", "B2"])
    assert narrowed["$defs"]["Inner"]["properties"]["text"] == {
        "title": "Text",
        "type": "string",
        "enum": ["A7", "B2"],
    }
    assert "enum" not in original["$defs"]["Inner"]["properties"]["text"]  # a copy
    root = restrict(original, "", "note", ["x"])
    assert root["properties"]["note"]["enum"] == ["x"]
    with pytest.raises(KeyError):
        restrict(original, "Inner", "nope", ["x"])
    with pytest.raises(KeyError):
        restrict(original, "Missing", "text", ["x"])


def test_strict_schema_drops_length_bounds() -> None:
    body = {"type": "object", "properties": {"s": {"type": "string", "maxLength": 5}}}
    assert strict_json_schema(body)["properties"]["s"] == {"type": "string"}


def test_raw_control_characters_in_strings_are_read_leniently() -> None:
    parsed = parse_output('{"items": [{"text": "line one\nline\ttwo"}]}', Outer)
    assert parsed.items[0].text == "line one\nline\ttwo"
    with pytest.raises(ValidationError):
        parse_output('{"items": [{"text": "cut', Outer)
    with pytest.raises(ValidationError):
        parse_output('{"items": [{"nope": "a\nb"}]}', Outer)  # lenient JSON, still validated
