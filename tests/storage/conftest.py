"""Every storage test runs on both engines: SQLite (the default) and PostgreSQL.

`database_url` and `open_store` (tests/conftest.py) are parametrised over both; this folder's
`store` is too (elsewhere `store` is the default SQLite one).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from storage import Store


@pytest.fixture
def store(tmp_path: Path, open_store: Callable[..., Store]) -> Iterator[Store]:
    """A fresh store on this test's engine."""
    with open_store(tmp_path / "factbot.db") as opened:
        yield opened
