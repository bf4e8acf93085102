"""OCR accuracy and speed on generated screenshots (`python -m bench.image_ocr`).

Real post texts (the MUSE study's 247 misleading posts, ../shared/data/eval/muse/posts.csv) are
drawn as post screenshots in several fonts, sizes and both light and dark themes, wrapped at a
phone-like width, and read back. The character error rate is the edit distance between what was
drawn and what was read (whitespace normalised) over the length drawn. Goal: CER <= 2 %.
"""

from __future__ import annotations

import argparse
import csv
import json
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from pipeline.image.ocr import TesseractOcr, ocr_engine
from pipeline.records.image import OcrLine

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
FONTS = Path("/usr/share/fonts/truetype")
STYLES = [
    ("dejavu/DejaVuSans.ttf", 22, False),
    ("dejavu/DejaVuSerif.ttf", 18, False),
    ("liberation/LiberationSans-Regular.ttf", 16, False),
    ("liberation/LiberationSans-Bold.ttf", 26, False),
    ("dejavu/DejaVuSans.ttf", 20, True),
    ("liberation/LiberationSerif-Regular.ttf", 15, True),
]
GOAL_CER = 0.02
ACCOUNT_HANDLE = "@account"


def post_texts(limit: int) -> list[str]:
    """Return up to limit distinct MUSE post texts, links and non-Latin symbols removed."""
    with (DATA / "eval" / "muse" / "posts.csv").open(newline="", encoding="utf-8") as handle:
        texts = [row["post_text"] for row in csv.DictReader(handle)]
    clean = []
    for text in dict.fromkeys(texts):
        words = [w for w in text.split() if not w.startswith("http")]
        kept = "".join(c for c in " ".join(words) if c.isascii() and (c.isprintable()))
        if len(kept) >= 40:
            clean.append(kept[:280])
    return clean[:limit]


def draw(text: str, font: str, size: int, dark: bool) -> Image.Image:
    """Return text drawn as a post screenshot, wrapped at about 48 characters."""
    face = ImageFont.truetype(str(FONTS / font), size)
    lines = textwrap.wrap(text, 48)
    width = max(int(face.getlength(line)) for line in lines) + 48
    height = (size + 12) * len(lines) + 100
    back, ink = ((21, 32, 43), (231, 233, 234)) if dark else ((255, 255, 255), (15, 20, 25))
    picture = Image.new("RGB", (width, height), back)
    pen = ImageDraw.Draw(picture)
    pen.ellipse((24, 16, 56, 48), fill=(29, 161, 242))
    pen.text((66, 22), f"Some Account {ACCOUNT_HANDLE}", fill=(120, 130, 140), font=face)
    for n, line in enumerate(lines):
        pen.text((24, 70 + n * (size + 12)), line, fill=ink, font=face)
    return picture


def post_lines(lines: Sequence[OcrLine]) -> list[OcrLine]:
    """Return the lines read below the account line (found by its text, not its position:
    rapidocr reads the round avatar as a line "O" of its own)."""
    for n, line in enumerate(lines):
        if ACCOUNT_HANDLE in line.text:
            return list(lines[n + 1 :])
    return list(lines)


def distance(one: str, other: str) -> int:
    """Return the Levenshtein distance between two strings."""
    previous = np.arange(len(other) + 1)
    for i, a in enumerate(one, 1):
        current = np.empty_like(previous)
        current[0] = i
        cost = np.array([a != b for b in other], dtype=np.int64)
        for j in range(1, len(other) + 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost[j - 1])
        previous = current
    return int(previous[-1])


def run(
    limit: int, engine_name: str, *, psm: int | None = None, min_confidence: float | None = None
) -> dict[str, object]:
    """Return the benchmark's figures (psm and min_confidence override Tesseract's defaults)."""
    engine = ocr_engine(engine_name)
    if isinstance(engine, TesseractOcr):
        engine.psm = psm
        engine.min_confidence = min_confidence or engine.min_confidence
        chosen = "auto" if psm is None else psm
        engine_name = f"tesseract --psm {chosen} min_confidence {engine.min_confidence}"
    errors = chars = 0
    seconds: list[float] = []
    per_style: dict[str, list[float]] = {}
    for n, text in enumerate(post_texts(limit)):
        font, size, dark = STYLES[n % len(STYLES)]
        picture = draw(text, font, size, dark)
        started = time.perf_counter()
        read = engine.read(picture)
        seconds.append(time.perf_counter() - started)
        got = " ".join(line.text for line in post_lines(read.lines))
        want = " ".join(text.split())
        wrong = distance(want, " ".join(got.split()))
        errors += wrong
        chars += len(want)
        style = f"{font}:{size}{':dark' if dark else ''}"
        per_style.setdefault(style, []).append(wrong / len(want))
    cer = errors / chars
    return {
        "engine": engine_name,
        "screenshots": len(seconds),
        "characters": chars,
        "cer": round(cer, 4),
        "cer_by_style": {k: round(float(np.mean(v)), 4) for k, v in per_style.items()},
        "seconds_per_image_p50": round(float(np.percentile(seconds, 50)), 3),
        "seconds_per_image_p95": round(float(np.percentile(seconds, 95)), 3),
        "goal_met": cer <= GOAL_CER,
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Run the benchmark and print its figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=60, help="Screenshots to read.")
    parser.add_argument("--engine", default="tesseract", choices=["tesseract", "rapidocr"])
    parser.add_argument("--psm", type=int, default=None, help="Tesseract page segmentation.")
    parser.add_argument("--min-confidence", type=float, default=None, help="Tesseract words.")
    args = parser.parse_args(argv)
    figures = run(args.limit, args.engine, psm=args.psm, min_confidence=args.min_confidence)
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
