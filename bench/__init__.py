"""Benchmark harnesses and stand-in servers: developer tools, not part of the installed package."""
