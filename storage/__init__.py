"""Persistence: one store over SQLite through sqlite-utils."""

from storage.store import Store

__all__ = ["Store"]
