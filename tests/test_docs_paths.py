"""Docs name only modules and files that exist: README.md, CONTRIBUTING.md and docs/**/*.md.

A path (``bots/runtime/workers/pool.py``, ``storage/``, ``tests/storage/``) must be a file or
folder of the checkout; a dotted module path (``bots.runtime.checking.requests``, also with a
name after it: ``bots.runtime.checking.requests.CheckRequests``) must be a module, and the first
name after the module must be defined in it. Moving or renaming a module without its docs
fails here. A pattern (``tests/support/fake_<name>.py``) must have its folder.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOPS = ("bots", "pipeline", "storage", "bench", "tests", "deploy")
SLASHED = re.compile(r"(?<![\w./-])((?:" + "|".join(TOPS) + r")/[\w./@-]*\w/?)")
DOTTED = re.compile(r"(?<![\w./-])((?:bots|pipeline|storage|bench)(?:\.\w+)+)")
PAGES = sorted(
    [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *(ROOT / "docs").rglob("*.md")],
    key=lambda p: p.as_posix(),
)


@functools.cache
def names_in(module: Path) -> frozenset[str]:
    """Return the names a module defines or imports at its top level."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            found.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                found |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.Import | ast.ImportFrom):
            found |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.If | ast.Try):  # TYPE_CHECKING blocks, optional imports
            for inner in ast.walk(node):
                if isinstance(inner, ast.Import | ast.ImportFrom):
                    found |= {(a.asname or a.name).split(".")[0] for a in inner.names}
                elif isinstance(inner, ast.ClassDef | ast.FunctionDef):
                    found.add(inner.name)
    return frozenset(found)


def dotted_exists(dotted: str, root: Path = ROOT) -> bool:
    """Whether a dotted path is a module, or a module followed by a name it defines."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        base = root.joinpath(*parts[:cut])
        module = base.with_suffix(".py") if not base.is_dir() else base / "__init__.py"
        if not module.is_file():
            continue
        rest = parts[cut:]
        if not rest:
            return True
        if (base / f"{rest[0]}.py").is_file() or (base / rest[0]).is_dir():
            return False  # a submodule's name would have matched with a longer cut
        return rest[0] in names_in(module)
    return False


def missing(text: str, root: Path = ROOT) -> list[str]:
    """Return the module paths a page names that do not exist under root."""
    gone = []
    for match in SLASHED.finditer(text):
        path = match.group(1)
        if text[match.end() : match.end() + 1] in ("<", "*", "{"):
            path = path.rpartition("/")[0]  # a pattern (tests/support/fake_<name>.py): its folder
        if not (root / path).exists():
            gone.append(path)
    for match in DOTTED.finditer(text):
        dotted = match.group(1)
        if re.search(r"\.(py|md|toml|yml|json|jsonl|txt|db|html)$", dotted):
            continue  # a file name (`storage.md`), not a module
        if not dotted_exists(dotted, root):
            gone.append(dotted)
    return gone


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_documented_module_paths_exist(page: Path) -> None:
    assert missing(page.read_text(encoding="utf-8")) == []


def test_a_moved_module_is_seen(tmp_path: Path) -> None:
    (tmp_path / "bots" / "runtime").mkdir(parents=True)
    (tmp_path / "bots" / "__init__.py").write_text("")
    (tmp_path / "bots" / "runtime" / "__init__.py").write_text("")
    (tmp_path / "bots" / "runtime" / "pool.py").write_text("class WorkerPool: ...\n")
    page = (
        "The pool (`bots/runtime/pool.py`, `bots.runtime.pool.WorkerPool`) was "
        "`bots/runtime/worker.py`, `bots.runtime.worker` and `bots.runtime.pool.Gone`; "
        "`bots/runtime/fake_<name>.py` is a pattern, `bots/gone/fake_*.py` a gone folder."
    )
    assert missing(page, tmp_path) == [
        "bots/runtime/worker.py",
        "bots/gone",
        "bots.runtime.worker",
        "bots.runtime.pool.Gone",
    ]
