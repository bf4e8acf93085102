"""Edits a picture goes through when it is reposted: the near-duplicate benchmark's cases.

Each function takes and returns an RGB picture. The caption bar and the screenshot frame draw
text with DejaVu (Debian `fonts-dejavu-core`), as a meme generator or a phone would.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont, ImageOps

FONTS = Path("/usr/share/fonts/truetype/dejavu")


def font(size: int, *, bold: bool = False) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """Return DejaVu Sans at size, or Pillow's default font when it is not installed."""
    path = FONTS / ("DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf")
    return ImageFont.truetype(str(path), size) if path.exists() else ImageFont.load_default(size)


def resize_half(picture: Image.Image) -> Image.Image:
    """Return the picture at 50 % of its width and height."""
    size = (max(1, picture.width // 2), max(1, picture.height // 2))
    return picture.resize(size, Image.Resampling.BILINEAR)


def jpeg_30(picture: Image.Image) -> Image.Image:
    """Return the picture recompressed as JPEG at quality 30."""
    buffer = io.BytesIO()
    picture.save(buffer, "JPEG", quality=30)
    return Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")


def crop_10(picture: Image.Image) -> Image.Image:
    """Return the picture with 10 % of its width and height cut off, off centre (7 % / 3 %)."""
    w, h = picture.size
    return picture.crop(
        (round(w * 0.07), round(h * 0.03), w - round(w * 0.03), h - round(h * 0.07))
    )


def caption_bar(picture: Image.Image) -> Image.Image:
    """Return the picture under a white bar with a black caption, meme style."""
    w, h = picture.size
    bar = max(32, round(h * 0.18))
    canvas = Image.new("RGB", (w, h + bar), "white")
    canvas.paste(picture, (0, bar))
    draw = ImageDraw.Draw(canvas)
    draw.text(
        (round(w * 0.03), bar // 4),
        "BREAKING: this is happening right now",
        fill="black",
        font=font(max(12, bar // 3), bold=True),
    )
    return canvas


def screenshot(picture: Image.Image) -> Image.Image:
    """Return the picture inside a post screenshot: avatar, name, text above, counts below."""
    w, h = picture.size
    pad, top, bottom = round(w * 0.06), round(h * 0.22), round(h * 0.12)
    canvas = Image.new("RGB", (w + 2 * pad, h + top + bottom), "white")
    canvas.paste(picture, (pad, top))
    draw = ImageDraw.Draw(canvas)
    small = font(max(10, top // 6))
    avatar = top // 2
    draw.ellipse((pad, top // 8, pad + avatar, top // 8 + avatar), fill=(29, 161, 242))
    draw.text((pad + avatar + 10, top // 8), "Some User @someuser · 2h", fill="black", font=small)
    draw.text(
        (pad + avatar + 10, top // 8 + top // 4),
        "You will not believe this",
        fill="black",
        font=small,
    )
    draw.text(
        (pad, h + top + bottom // 4),
        "1.2K likes   340 reposts   56 replies",
        fill=(90, 90, 90),
        font=small,
    )
    return canvas


def flip(picture: Image.Image) -> Image.Image:
    """Return the picture mirrored left to right."""
    return ImageOps.mirror(picture)


TRANSFORMS: dict[str, Callable[[Image.Image], Image.Image]] = {
    "resize_50": resize_half,
    "jpeg_q30": jpeg_30,
    "crop_10": crop_10,
    "caption_bar": caption_bar,
    "screenshot_border": screenshot,
    "flip": flip,
}
