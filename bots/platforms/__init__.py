"""Platform adapters, one package per platform, each with a `setup()` that imports its library.

An adapter only translates: a platform event becomes a `Post` plus the event's natural key, and a
`Correction` becomes a platform message. Only `bots.platforms.<name>` imports its platform's
library (an import-linter contract in pyproject.toml holds that).
"""
