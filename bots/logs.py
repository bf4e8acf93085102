"""Log output: one line per record, with the structured `extra` fields the stages attach.

The stages log events with fields (`log.warning("invalid model output", extra={"stage": ...,
"reason": ...})`); the standard formatter drops those fields, so an operator would see the event
without its reason. `KeyValueFormatter` appends them as `key=value` (values repr-quoted when they
hold spaces), which reads well in a terminal and greps well in a journal.
"""

from __future__ import annotations

import logging

# every attribute a LogRecord has before `extra` adds its own
_STANDARD = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime", "taskName"}
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def _value(value: object) -> str:
    text = str(value)
    return repr(text) if not text or any(c.isspace() or c in "='\"" for c in text) else text


class KeyValueFormatter(logging.Formatter):
    """Format a record as usual, then its extra fields as key=value pairs."""

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        extras = {k: v for k, v in vars(record).items() if k not in _STANDARD}
        if not extras:
            return line
        fields = " ".join(f"{k}={_value(v)}" for k, v in extras.items())
        head, sep, rest = line.partition("\n")  # keep a traceback below the fields
        return f"{head} {fields}{sep}{rest}"


def configure(level: str) -> None:
    """Send records at level and above to stderr, one line each with their fields."""
    handler = logging.StreamHandler()
    handler.setFormatter(KeyValueFormatter(FORMAT))
    logging.basicConfig(level=level, handlers=[handler])
