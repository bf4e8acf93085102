"""SQL lives under storage/: no raw SQL string in the service (bots/) or the engine (pipeline/).

Every query goes through a storage repository, so a schema change is made in one package (and
on both engines: tests/storage/test_schema_parity.py). A string literal (or an f-string's text)
that starts like a SQL statement, in upper case as factbot writes SQL, fails this test;
docstrings and comments may talk about SQL.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TREES = ("bots", "pipeline")
SQL = re.compile(
    r"^\s*(SELECT\s|INSERT\s+(OR\s+[A-Z]+\s+)?INTO\s|UPDATE\s+\w+\s+SET\s|DELETE\s+FROM\s"
    r"|CREATE\s+(UNIQUE\s+|VIRTUAL\s+)?(TABLE|INDEX|TRIGGER|VIEW)\s|DROP\s+(TABLE|INDEX)\s"
    r"|ALTER\s+TABLE\s|PRAGMA\s|WITH\s+(RECURSIVE\s+)?\w+\s+AS\s*\(|BEGIN\s+IMMEDIATE)"
)


def raw_sql(source: str) -> list[tuple[int, str]]:
    """Return the line and start of every SQL string literal in a module's source."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return sorted(
        (node.lineno, node.value.strip()[:60])
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and SQL.match(node.value)
    )


@pytest.mark.parametrize("tree", TREES)
def test_no_raw_sql_outside_storage(tree: str) -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}: {text}"
        for path in sorted((ROOT / tree).rglob("*.py"))
        for line, text in raw_sql(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_sql_is_found_in_strings_and_f_strings_not_in_docstrings() -> None:
    source = '''
"""Reads the jobs table. SELECT what you need."""
def f(db, table):
    """SELECT * FROM jobs is what this does."""
    db.execute("SELECT 1")
    db.execute(f"DELETE FROM {table} WHERE id = ?")
    db.execute(
        "INSERT OR IGNORE INTO kv (key, value) "
        "VALUES (?, ?)"
    )
    return "Select a check"  # prose, not SQL
'''
    assert [line for line, _ in raw_sql(source)] == [5, 6, 8]
