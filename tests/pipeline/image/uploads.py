"""Files people upload as images: a real screenshot of a claim, and broken or disguised ones."""

from __future__ import annotations

from tests.pipeline.image.images import encode, screenshot

CLAIM = "5G networks spread the coronavirus"


def claim_png() -> bytes:
    """Return a real PNG screenshot of a false claim the fixture corpus refutes."""
    return encode(screenshot([CLAIM], size=28), "PNG")


def truncated_png() -> bytes:
    """Return a PNG cut short after its header: it opens, and fails when decoded."""
    return claim_png()[:120]


PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
HTML = b"<!doctype html><html><head><title>Not an image</title></head><body>hi</body></html>"
SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
