"""Reading values out of JSON-LD (schema.org) objects, which publishers fill loosely.

A property may hold one object or a list of them, a string with stray whitespace, a number as
text; these helpers read what is there and return None for what is not.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any


def first_object(value: object) -> Mapping[str, Any]:
    """Return value when it is an object, its first object when it is a list, else {}."""
    if isinstance(value, list):
        value = next((v for v in value if isinstance(v, Mapping)), None)
    return value if isinstance(value, Mapping) else {}


def text_of(value: object) -> str | None:
    """Return a non-empty string with its whitespace collapsed, else None."""
    if isinstance(value, str) and value.strip():
        return " ".join(value.split())
    return None


def number_of(value: object) -> float | None:
    """Return a finite number given as a number or as text, else None (booleans too)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None
