"""Fetching and reading web pages: SSRF-safe fetcher, address checks, robots.txt, page cache,
extraction, hidden text, walls, feeds.
"""
