"""One schema: SQLite's migrations and PostgreSQL's build the same tables, columns, indexes and
constraints.

Both engines' schemas are created for real (storage/migrations.py on a SQLite file,
storage/pg_migrations.py on the session's PostgreSQL server), read back from each engine's
catalog and put in one shape: column types as SQLite's storage classes, defaults without
PostgreSQL's casts, primary keys, unique constraints, foreign keys with their delete action,
CHECK constraints as the column and the values they allow, and named indexes with their columns.
What differs on purpose is listed below with its reason; anything else fails the test.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.support.postgres import PostgresServer

# Tables only one engine has, and why.
SQLITE_ONLY = {
    # The per-node evidence index stays in each node's SQLite file (storage/store.py).
    "documents",
    "passages",
    "passages_fts",
    "passages_trigram",  # the evidence index's trigram table (m026), per node as the rest
    "image_index",
    "face_gallery",
    # The dashboard's search: an FTS5 table in SQLite, a tsvector table in PostgreSQL, compared
    # by what they answer in tests/storage/test_browse_search.py.
    "check_text",
    # The fact-check index's search, in the same two shapes (m029, p006).
    "fact_check_text",
    # sqlite-utils' record of applied migrations; PostgreSQL's is `factbot_migrations`.
    "_sqlite_migrations",
}
PG_ONLY = {"check_text", "fact_check_text", "factbot_migrations"}
# Columns only one engine has: PostgreSQL spells out SQLite's implicit rowid where code reads it.
PG_ONLY_COLUMNS = {("checks", "rowid"), ("evidence", "rowid")}

TYPES = {
    "text": "TEXT",
    "integer": "INTEGER",
    "bigint": "INTEGER",
    "smallint": "INTEGER",
    "real": "REAL",
    "double precision": "REAL",
    "float": "REAL",
    "blob": "BLOB",
    "bytea": "BLOB",
}


@dataclass(frozen=True)
class Schema:
    """One engine's schema in a shape both engines can be put in."""

    tables: frozenset[str]
    columns: dict[str, dict[str, tuple[str, bool, str | None]]]  # table -> column -> shape
    primary_keys: dict[str, tuple[str, ...]]
    uniques: dict[str, frozenset[tuple[str, ...]]]
    foreign_keys: dict[str, frozenset[tuple[tuple[str, ...], str, tuple[str, ...], str]]]
    checks: dict[str, frozenset[tuple[str, frozenset[str]]]]
    indexes: dict[str, dict[str, tuple[bool, tuple[str, ...]]]]  # table -> name -> shape


def _default(value: Any) -> str | None:
    """Return a column default without casts, quotes kept (`'[]'::text` is `'[]'`)."""
    if value is None:
        return None
    text = re.sub(r"::[a-z ]+(\[\])?", "", str(value)).strip()
    while text.startswith("(") and text.endswith(")"):
        text = text[1:-1].strip()
    return text


def _check(sql: str) -> tuple[str, frozenset[str]]:
    """Return a CHECK constraint as the column it tests and the string values it allows."""
    words = re.findall(r"\b([a-z_]+)\b\s*(?:=|IN\b|in\b)", sql)
    return (words[0] if words else sql, frozenset(re.findall(r"'([^']*)'", sql)))


def _checks_in(create_sql: str) -> list[str]:
    """Return the bodies of the CHECK (...) clauses of a CREATE TABLE statement."""
    found = []
    for match in re.finditer(r"\bCHECK\s*\(", create_sql, re.IGNORECASE):
        depth, start = 1, match.end()
        end = start
        while depth:
            depth += {"(": 1, ")": -1}.get(create_sql[end], 0)
            end += 1
        found.append(create_sql[start : end - 1])
    return found


def sqlite_schema(path: Path) -> Schema:
    """Read a migrated SQLite database's schema."""
    db = sqlite3.connect(path)
    try:
        rows = db.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        ).fetchall()
        shadow = {name for name, sql in rows if sql and "VIRTUAL TABLE" in sql.upper()}
        tables = {
            name: sql
            for name, sql in rows
            if not any(name.startswith(v + "_") for v in shadow)  # FTS5's shadow tables
        }
        schema = Schema(frozenset(tables), {}, {}, {}, {}, {}, {})
        for table, sql in tables.items():
            if table in shadow:
                continue
            info = db.execute(f"PRAGMA table_info({table})").fetchall()
            pk = tuple(row[1] for row in sorted((r for r in info if r[5]), key=lambda r: r[5]))
            schema.primary_keys[table] = pk
            schema.columns[table] = {
                name: (TYPES[kind.lower()], bool(notnull) or name in pk, _default(default))
                for _, name, kind, notnull, default, _ in info
            }
            uniques, indexes = set(), {}
            for _, name, unique, origin, _ in db.execute(f"PRAGMA index_list({table})"):
                cols = tuple(
                    row[2] if row[2] is not None else "<expression>"
                    for row in db.execute(f"PRAGMA index_xinfo({name})")
                    if row[5]  # key columns only
                )
                if origin == "u":
                    uniques.add(cols)
                elif origin == "c":
                    indexes[name] = (bool(unique), cols)
            schema.uniques[table] = frozenset(uniques)
            schema.indexes[table] = indexes
            fks: dict[int, list[Any]] = {}
            for fid, _, ref, col, ref_col, _, on_delete, _ in db.execute(
                f"PRAGMA foreign_key_list({table})"
            ):
                fks.setdefault(fid, [[], ref, [], on_delete])
                fks[fid][0].append(col)
                fks[fid][2].append(ref_col)
            schema.foreign_keys[table] = frozenset(
                (tuple(c), ref, tuple(r), action.upper()) for c, ref, r, action in fks.values()
            )
            schema.checks[table] = frozenset(_check(body) for body in _checks_in(sql or ""))
        return schema
    finally:
        db.close()


def pg_schema(url: str) -> Schema:
    """Read a migrated PostgreSQL database's schema (schema `public`)."""
    with psycopg.connect(url) as conn:
        tables = {
            row[0]
            for row in conn.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = 'public' AND table_type = 'BASE TABLE'"
            )
        }
        schema = Schema(frozenset(tables), {}, {}, {}, {}, {}, {})
        for table in tables:
            schema.columns[table] = {}
            for name, kind, nullable, default, identity in conn.execute(
                "SELECT column_name, data_type, is_nullable, column_default, is_identity "
                "FROM information_schema.columns WHERE table_schema = 'public' "
                "AND table_name = %s",
                (table,),
            ):
                if kind == "tsvector":
                    continue
                shape = (TYPES[kind], nullable == "NO", None if identity == "YES" else default)
                schema.columns[table][name] = (shape[0], shape[1], _default(shape[2]))
            uniques, fks, checks = set(), set(), set()
            pk: tuple[str, ...] = ()
            for kind, columns, ref, ref_columns, action, definition in conn.execute(
                """
                SELECT c.contype,
                       ARRAY(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY AS k(n, i)
                             JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n
                             ORDER BY k.i),
                       c.confrelid::regclass::text,
                       ARRAY(SELECT a.attname FROM unnest(c.confkey) WITH ORDINALITY AS k(n, i)
                             JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n
                             ORDER BY k.i),
                       c.confdeltype, pg_get_constraintdef(c.oid)
                FROM pg_constraint c WHERE c.conrelid = %s::regclass
                """,
                (table,),
            ):
                if kind == "p":
                    pk = tuple(columns)
                elif kind == "u":
                    uniques.add(tuple(columns))
                elif kind == "f":
                    actions = {"a": "NO ACTION", "c": "CASCADE", "n": "SET NULL", "r": "RESTRICT"}
                    fks.add((tuple(columns), ref, tuple(ref_columns), actions[action]))
                elif kind == "c":
                    checks.add(_check(definition))
            schema.primary_keys[table] = pk
            schema.uniques[table] = frozenset(uniques)
            schema.foreign_keys[table] = frozenset(fks)
            schema.checks[table] = frozenset(checks)
            owned = {
                row[0]
                for row in conn.execute(
                    "SELECT conindid::regclass::text FROM pg_constraint "
                    "WHERE conrelid = %s::regclass AND contype IN ('p', 'u')",
                    (table,),
                )
            }
            indexes = {}
            for name, unique, columns in conn.execute(
                """
                SELECT i.relname, x.indisunique,
                       ARRAY(SELECT COALESCE(a.attname, '<expression>')
                             FROM unnest(x.indkey) WITH ORDINALITY AS k(n, o)
                             LEFT JOIN pg_attribute a
                               ON a.attrelid = x.indrelid AND a.attnum = k.n AND k.n > 0
                             ORDER BY k.o)
                FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
                WHERE x.indrelid = %s::regclass
                """,
                (table,),
            ):
                if name not in owned:
                    indexes[name] = (unique, tuple(columns))
            schema.indexes[table] = indexes
        return schema


def differences(lite: Schema, pg: Schema) -> list[str]:
    """Return every difference between the two schemas that is not listed as deliberate."""
    found = []
    for table in sorted(lite.tables - pg.tables - SQLITE_ONLY):
        found.append(f"{table}: only in SQLite")
    for table in sorted(pg.tables - lite.tables - PG_ONLY):
        found.append(f"{table}: only in PostgreSQL")
    for table in sorted((lite.tables & pg.tables) - SQLITE_ONLY - PG_ONLY):
        lite_cols = lite.columns[table]
        pg_cols = {
            name: shape
            for name, shape in pg.columns[table].items()
            if (table, name) not in PG_ONLY_COLUMNS
        }
        for name in sorted(lite_cols.keys() | pg_cols.keys()):
            a, b = lite_cols.get(name), pg_cols.get(name)
            if a != b:
                found.append(f"{table}.{name}: SQLite {a}, PostgreSQL {b}")
        pg_uniques = {
            cols
            for cols in pg.uniques[table]
            if not any((table, c) in PG_ONLY_COLUMNS for c in cols)
        }
        for label, a, b in (
            ("primary key", lite.primary_keys[table], pg.primary_keys[table]),
            ("unique", lite.uniques[table], frozenset(pg_uniques)),
            ("foreign keys", lite.foreign_keys[table], pg.foreign_keys[table]),
            ("checks", lite.checks[table], pg.checks[table]),
            ("indexes", lite.indexes[table], pg.indexes[table]),
        ):
            if a != b:
                found.append(f"{table} {label}: SQLite {sorted(a)}, PostgreSQL {sorted(b)}")
    return found


def test_both_engines_build_one_schema(
    migrated_database: Path, postgres_server: PostgresServer
) -> None:
    lite = sqlite_schema(migrated_database)
    pg = pg_schema(postgres_server.migrated_database())
    assert len(lite.tables) > 30
    assert lite.tables >= SQLITE_ONLY  # the lists name real tables
    assert pg.tables >= PG_ONLY
    found = differences(lite, pg)
    assert found == [], "\n".join(found)


def test_a_column_changed_on_one_engine_is_a_difference(
    migrated_database: Path, postgres_server: PostgresServer, tmp_path: Path
) -> None:
    url = postgres_server.migrated_database()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ALTER TABLE posts ALTER COLUMN language SET DEFAULT 'en'")
        conn.execute("DROP INDEX jobs_waits_for")
        conn.execute("ALTER TABLE users DROP CONSTRAINT users_role_check")
        conn.execute("ALTER TABLE kv ADD COLUMN extra TEXT")
    found = differences(sqlite_schema(migrated_database), pg_schema(url))
    assert any(line.startswith("posts.language:") for line in found), found
    assert any(line.startswith("jobs indexes:") for line in found), found
    assert any(line.startswith("users checks:") for line in found), found
    assert any(line.startswith("kv.extra:") for line in found), found


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("status IN ('pending', 'done')", ("status", frozenset({"pending", "done"}))),
        (
            "CHECK ((role = ANY (ARRAY['viewer'::text, 'admin'::text])))",
            ("role", frozenset({"viewer", "admin"})),
        ),
    ],
)
def test_a_check_reads_the_same_on_both_engines(
    sql: str, expected: tuple[str, frozenset[str]]
) -> None:
    assert _check(sql) == expected
