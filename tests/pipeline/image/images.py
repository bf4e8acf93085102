"""Images the image tests generate: screenshots, photos with EXIF, hostile and odd files."""

from __future__ import annotations

import io
import struct
import zlib
from datetime import datetime

from PIL import Image, ImageDraw, ImageFont

FONTS = "/usr/share/fonts/truetype"


def screenshot(
    lines: list[str], *, font: str = "dejavu/DejaVuSans.ttf", size: int = 22, dark: bool = False
) -> Image.Image:
    """Return a post-like screenshot of lines of text."""
    face = ImageFont.truetype(f"{FONTS}/{font}", size)
    width = max(int(face.getlength(line)) for line in lines) + 60
    height = (size + 14) * len(lines) + 60
    back, ink = ((21, 32, 43), (240, 240, 240)) if dark else ((255, 255, 255), (15, 20, 25))
    picture = Image.new("RGB", (width, height), back)
    draw = ImageDraw.Draw(picture)
    for n, line in enumerate(lines):
        draw.text((30, 30 + n * (size + 14)), line, fill=ink, font=face)
    return picture


def encode(picture: Image.Image, fmt: str, **options: object) -> bytes:
    """Return picture encoded in fmt."""
    buffer = io.BytesIO()
    picture.save(buffer, fmt, **options)
    return buffer.getvalue()


def photo(size: tuple[int, int] = (320, 240), seed: int = 1) -> Image.Image:
    """Return a photo-like picture: textured gradients and shapes that differ by seed."""
    import numpy as np

    w, h = size
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack(
        [(x * (1 + seed % 3) + y) % 256, (y * 2 + seed * 50) % 256, (x + y * seed) % 256], axis=2
    ).astype(np.float64)
    texture = rng.normal(0, 18, (h // 8 + 1, w // 8 + 1, 3)).repeat(8, 0).repeat(8, 1)[:h, :w]
    picture = Image.fromarray(np.clip(base + texture, 0, 255).astype(np.uint8), "RGB")
    draw = ImageDraw.Draw(picture)
    for k in range(6):
        cx, cy = (seed * 37 + k * 53) % w, (seed * 71 + k * 29) % h
        draw.ellipse(
            (cx, cy, cx + w // 5, cy + h // 5), fill=((k * 60) % 256, 30 * seed % 256, 200)
        )
    return picture


def exif_jpeg(
    when: datetime, *, lat: float, lon: float, camera: tuple[str, str], software: str
) -> bytes:
    """Return a JPEG whose EXIF has a capture time, GPS position, camera and software."""
    exif = Image.Exif()
    exif[0x010F], exif[0x0110], exif[0x0131] = camera[0], camera[1], software
    exif.get_ifd(0x8769)[0x9003] = when.strftime("%Y:%m:%d %H:%M:%S")
    exif.get_ifd(0x8769)[0x9011] = "-05:00"

    def dms(value: float) -> tuple[float, float, float]:
        value = abs(value)
        d = int(value)
        m = int((value - d) * 60)
        return (float(d), float(m), round((value - d - m / 60) * 3600, 2))

    gps = exif.get_ifd(0x8825)
    gps[1], gps[2] = ("N" if lat >= 0 else "S"), dms(lat)
    gps[3], gps[4] = ("E" if lon >= 0 else "W"), dms(lon)
    return encode(photo(), "JPEG", exif=exif, quality=90)


def png_bomb(width: int, height: int) -> bytes:
    """Return a tiny PNG that declares width x height black pixels (its data really inflates)."""
    row = b"\x00" + b"\x00" * width  # filter byte, then grey pixels
    compressor = zlib.compressobj(9)
    body = b"".join(compressor.compress(row) for _ in range(min(height, 2000)))
    body += compressor.flush()

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data))
            + kind
            + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", body) + chunk(b"IEND", b"")
    )


def animated_gif(frames: int = 3) -> bytes:
    """Return an animated GIF whose first frame is red."""
    colours = [(220, 20, 20), (20, 220, 20), (20, 20, 220)]
    pictures = [Image.new("RGB", (64, 48), colours[n % 3]) for n in range(frames)]
    return encode(
        pictures[0], "GIF", save_all=True, append_images=pictures[1:], duration=100, loop=0
    )


SVG_WITH_SCRIPT = b"""<?xml version="1.0"?>
<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100">
<script>fetch('http://169.254.169.254/latest/meta-data/')</script>
<rect width="100" height="100" fill="red"/></svg>"""
