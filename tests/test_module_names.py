"""One name, one module: no two public modules of a package tree share a file name.

A name that means one module keeps `grep`, tracebacks and the docs' module paths unambiguous
(there were four `checks.py`). A private module (``_events.py``) is exempt: it belongs to its
package and is never named from outside it (STYLE: one package per feature, private
implementation modules behind a `setup()` or the package's own exports).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TREES = ("bots", "pipeline", "storage")


def shared_names(tree: Path) -> dict[str, list[str]]:
    """Return each public module name used more than once under `tree`, with its paths."""
    paths: dict[str, list[str]] = defaultdict(list)
    for path in sorted(tree.rglob("*.py")):
        if path.name.startswith("_"):
            continue
        paths[path.stem].append(path.relative_to(tree.parent).as_posix())
    return {name: found for name, found in paths.items() if len(found) > 1}


@pytest.mark.parametrize("tree", TREES)
def test_no_two_public_modules_share_a_name(tree: str) -> None:
    assert shared_names(ROOT / tree) == {}


def test_a_shared_name_is_found(tmp_path: Path) -> None:
    for path in ("pkg/a/checks.py", "pkg/b/checks.py", "pkg/a/_events.py", "pkg/b/_events.py"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("")
    assert shared_names(tmp_path / "pkg") == {"checks": ["pkg/a/checks.py", "pkg/b/checks.py"]}
