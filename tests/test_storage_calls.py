"""Async code in the service (bots/) calls storage through `Store.call`, never directly.

A repository method called inside an `async def` runs its SQL on the event loop and stalls
every other request and job while the database answers (issue 38). This reads bots/ and fails
on a direct call of `<...>store.<repository>.<method>(...)`, `<...>store.db...(...)` or
`immediate(...)` in the body of an `async def` (nested plain functions and lambdas are not the
loop's: they are what `Store.call` runs). `await store.call(store.jobs.get, job_id)` passes:
the method is handed over, not called. tests/bots/api/test_storage_off_loop.py checks the
same at run time, through the API and the worker pool, and catches the indirect calls.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPOSITORIES = frozenset(
    {
        "documents", "checks", "sources", "jobs", "replies", "workers", "web", "reuse",
        "images", "faces", "state", "platform", "monitor", "review", "users", "browse",
        "metrics", "db", "index_db", "fact_checks",
    }
)  # fmt: skip
# CLI commands are synchronous code that runs its own short-lived loop: out of scope.
SKIPPED = ("bots/cli/",)


def _chain(node: ast.expr) -> list[str]:
    """Return a dotted name's parts (`self.store.jobs.get` -> self, store, jobs, get)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return parts[::-1]


def _direct(call: ast.Call) -> bool:
    parts = _chain(call.func)
    if parts[-1:] == ["immediate"]:
        return True
    return any(
        part.endswith("store") and parts[i + 1] in REPOSITORIES for i, part in enumerate(parts[:-1])
    )


class _Finder(ast.NodeVisitor):
    def __init__(self) -> None:
        self.kinds: list[str] = []  # the enclosing functions, innermost last
        self.found: list[tuple[int, str]] = []

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self.kinds.append("async")
        self.generic_visit(node)
        self.kinds.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.kinds.append("sync")
        self.generic_visit(node)
        self.kinds.pop()

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.kinds.append("sync")
        self.generic_visit(node)
        self.kinds.pop()

    def visit_Call(self, node: ast.Call) -> None:
        if self.kinds[-1:] == ["async"] and _direct(node):
            self.found.append((node.lineno, ".".join(_chain(node.func))))
        self.generic_visit(node)


def direct_calls(source: str) -> list[tuple[int, str]]:
    """Return the line and name of every direct storage call inside an async function."""
    finder = _Finder()
    finder.visit(ast.parse(source))
    return finder.found


def test_the_finder_tells_a_direct_call_from_a_handed_one() -> None:
    source = (
        "async def f(store):\n"
        "    store.jobs.get('a')\n"
        "    await store.call(store.jobs.get, 'a')\n"
        "    def inner():\n"
        "        return store.jobs.get('a')\n"
        "    with immediate(store.db):\n"
        "        pass\n"
        "def g(store):\n"
        "    store.jobs.get('a')\n"
    )
    assert direct_calls(source) == [(2, "store.jobs.get"), (6, "immediate")]


def test_async_code_in_bots_calls_storage_through_store_call() -> None:
    found = []
    for path in sorted((ROOT / "bots").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith(SKIPPED):
            continue
        found += [f"{relative}:{line}: {name}" for line, name in direct_calls(path.read_text())]
    assert not found, "storage called on the event loop (use `await store.call(...)`):\n" + (
        "\n".join(found)
    )
