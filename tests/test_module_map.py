"""The architecture page's module map is the import graph: a documented edge the code lacks, or
an import the map does not show, fails here.

The graph is read from the source (every `import` and absolute `from ... import`, at any depth,
TYPE_CHECKING blocks included) and folded into units: `pipeline` and `storage` whole, each
package or top module of `bots`, each concern of `bots.runtime`. The map in
docs/architecture/index.md sits between two comment markers; `python -m tests.test_module_map
--write` rewrites it from the code, without `--write` it prints it.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "architecture" / "index.md"
START, END = "<!-- module-map:start -->", "<!-- module-map:end -->"
TREES = ("bots", "pipeline", "storage")
_ROW = re.compile(r"^\| `(?P<unit>[\w.]+)` \| (?P<imports>.*) \|$")


def unit_of(module: str) -> str | None:
    """Return the map's unit for a dotted module name, or None for one outside factbot."""
    parts = module.split(".")
    if parts[0] in ("pipeline", "storage"):
        return parts[0]
    if parts[0] != "bots" or len(parts) == 1:
        return None
    if parts[1] == "runtime" and len(parts) > 2:
        return ".".join(parts[:3])
    return ".".join(parts[:2])


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Return each unit and the other units its modules import."""
    graph: dict[str, set[str]] = {}
    for tree in TREES:
        for path in sorted((root / tree).rglob("*.py")):
            unit = unit_of(_module_name(path, root))
            if unit is None:
                continue
            edges = graph.setdefault(unit, set())
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    names = [node.module]
                else:
                    continue
                edges |= {u for u in map(unit_of, names) if u is not None and u != unit}
    return graph


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def render(graph: Mapping[str, set[str]]) -> str:
    """Return the map as the page shows it: a Markdown table, one row per unit."""
    rows = ["| package | imports of factbot's own |", "|---|---|"]
    for unit in sorted(graph):
        imports = ", ".join(f"`{name}`" for name in sorted(graph[unit])) or "—"
        rows.append(f"| `{unit}` | {imports} |")
    return "\n".join(rows)


def documented(page: str) -> dict[str, set[str]]:
    """Return the map written on the page (raise ValueError when its markers are missing)."""
    if START not in page or END not in page:
        raise ValueError(f"{PAGE.name} has no {START} … {END} block")
    block = page.split(START, 1)[1].split(END, 1)[0]
    found: dict[str, set[str]] = {}
    for line in block.strip().splitlines()[2:]:
        match = _ROW.match(line.strip())
        if match is None:
            raise ValueError(f"not a row of the module map: {line!r}")
        imports = match["imports"].strip()
        found[match["unit"]] = set() if imports == "—" else set(re.findall(r"`([\w.]+)`", imports))
    return found


def write(page: Path = PAGE) -> None:
    """Rewrite the page's module map from the code."""
    text = page.read_text(encoding="utf-8")
    head, rest = text.split(START, 1)
    tail = rest.split(END, 1)[1]
    page.write_text(f"{head}{START}\n{render(import_graph())}\n{END}{tail}", encoding="utf-8")


def test_the_documented_module_map_is_the_import_graph() -> None:
    code, page = import_graph(), documented(PAGE.read_text(encoding="utf-8"))
    fix = "run `python -m tests.test_module_map --write` and say why in the page's text"
    assert sorted(page) == sorted(code), f"packages differ from the code; {fix}"
    wrong = {u: (sorted(page[u] - code[u]), sorted(code[u] - page[u])) for u in code}
    assert {u: d for u, d in wrong.items() if d != ([], [])} == {}, (
        f"(documented but not imported, imported but not documented); {fix}"
    )


def test_an_import_the_map_does_not_show_fails(tmp_path: Path) -> None:
    for tree in TREES:
        (tmp_path / tree).mkdir()
        (tmp_path / tree / "__init__.py").write_text("")
    (tmp_path / "storage" / "leak.py").write_text("def f():\n    import bots.app.root\n")
    graph = import_graph(tmp_path)
    assert graph["storage"] == {"bots.app"}  # a function-level import counts
    shown = documented(f"{START}\n{render({'storage': set(), 'pipeline': set()})}\n{END}")
    assert shown["storage"] != graph["storage"]


def test_the_layout_names_every_package_and_the_parts_a_newcomer_meets() -> None:
    page = PAGE.read_text(encoding="utf-8")
    layout = page.split("## Layout", 1)[1].split("## ", 1)[0]
    packages = [
        f"{folder.name}/"
        for parent in ("pipeline", "bots", "bots/runtime")
        for folder in sorted((ROOT / parent).iterdir())
        if (folder / "__init__.py").is_file()
    ]
    assert [name for name in packages if name not in layout] == []
    for part in ("PostgreSQL", "CheckRequests", "saq", "root.py", "resources.py", "services.py"):
        assert part in layout, part


if __name__ == "__main__":
    if "--write" in sys.argv[1:]:
        write()
    else:
        print(render(import_graph()))
