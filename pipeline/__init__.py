"""The fact-checking engine: platform-agnostic, async stages with typed records in and out.

Importing this package is cheap; heavy models load only when an embedder is built.
"""
