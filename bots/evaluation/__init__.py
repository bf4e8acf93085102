"""Evaluation on AVeriTeC, outside the engine: loading and sampling claims (`averitec`), scoring
(`score`) and the resumable per-claim journal (`journal`). Used by `factbot eval` and bench/."""
