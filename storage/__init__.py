"""Persistence: one store over SQLite through sqlite-utils, or its shared tables in PostgreSQL."""

from storage.store import Store

__all__ = ["Store"]
