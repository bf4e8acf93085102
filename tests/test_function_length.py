"""No function in bots/ is over 100 lines (the service's code is read more than it is written).

A function's length runs from its `def` line to its last line, docstring and nested functions
included, decorators not. A route factory that grows past it is split into route modules
(bots/api/), a command into helpers (bots/cli/eval.py).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 100
CREATE_API_LINES = 80  # the API's factory only wires route modules together (issue 38)


def long_functions(source: str, *, limit: int = MAX_LINES) -> list[tuple[str, int]]:
    """Return each function of a module longer than limit lines, with its length."""
    return [
        (node.name, node.end_lineno - node.lineno + 1)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > limit
    ]


def test_no_function_in_bots_is_over_100_lines() -> None:
    found = [
        f"{path.relative_to(ROOT)}: {name} ({lines} lines)"
        for path in sorted((ROOT / "bots").rglob("*.py"))
        for name, lines in long_functions(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_a_long_function_is_found_nested_ones_too() -> None:
    body = "".join(f"        x{i} = {i}\n" for i in range(3))
    source = f"def short():\n    pass\n\nasync def outer():\n    def inner():\n{body}{body}"
    assert long_functions(source, limit=5) == [("outer", 8), ("inner", 7)]


def test_create_api_only_wires_route_modules() -> None:
    source = (ROOT / "bots" / "api" / "routes.py").read_text(encoding="utf-8")
    (length,) = [
        node.end_lineno - node.lineno + 1
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef) and node.name == "create_api" and node.end_lineno
    ]
    assert length <= CREATE_API_LINES, f"create_api is {length} lines"
