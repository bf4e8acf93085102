"""Text in images (OCR), so a screenshot of a post or a headline is checked like any text.

Tesseract (through pytesseract, the Debian `tesseract-ocr` package) is the default: light,
no model weights to carry, and it read generated screenshots with a character error rate under
2 % (`python -m bench.image_ocr`). rapidocr (PP-OCR ONNX weights inside its wheel) is the option
for scripts Tesseract's English data does not cover; it is an optional extra
(`pip install 'factbot[rapidocr]'`), imported only when chosen, and choosing it without the
extra is a `ConfigError` that says how to install it.

Small pictures are enlarged before reading: Tesseract reads best at about 300 dpi, and a phone
screenshot scaled down for the web has letters 10-12 pixels high. Words Tesseract is unsure of
(confidence under `min_confidence`) are dropped, so noise in a photo does not become a claim.

Failure policy: an engine that is missing or fails raises `ImageError` (the describer keeps the
image without text); an image without text gives an empty `OcrText`.
"""

from __future__ import annotations

import importlib.util
import logging
import sys
import threading
from typing import Any, Protocol

import numpy as np
from PIL import Image, ImageOps

from pipeline.errors import ConfigError, ImageError
from pipeline.records.image import LoadedImage, OcrLine, OcrText
from pipeline.util.cpu import CpuPool, run_cpu

log = logging.getLogger(__name__)

TARGET_SIDE = 2000  # enlarge pictures whose longer side is shorter than this (at most 2x)
MAX_SIDE = 4000  # shrink larger ones: reading time grows with the pixels
# Tesseract's page segmentation (--psm): 3 is full layout analysis, right for a photo with a
# sign or a meme's captions; on a screenshot it dropped whole lines it took for a picture ("Made
# in America!!!!!"), so a text picture is read as one uniform block (6): CER 1.0 % -> 0.5 % on
# the benchmark. Not on photos: there 6 reads every texture as letters and can take 30 s.
LAYOUT_PSM, BLOCK_PSM = 3, 6
# Tesseract reads a sans-serif capital I standing alone as a vertical bar ("| was addicted");
# a bar alone between words is all but never meant in a post
VERTICAL_BAR_I = {"|": "I"}
TEXT_PICTURE_SHARE = 0.75  # a text picture: this share of pixels is its background colour
BACKGROUND_TOLERANCE = 8  # grey levels from the commonest one that count as background


class OcrEngine(Protocol):
    """Reads the text of a picture."""

    name: str

    def read(self, picture: Image.Image) -> OcrText:
        """Return the text lines of picture (blocking; called in the CPU pool)."""
        ...


def prepare(picture: Image.Image) -> Image.Image:
    """Return a greyscale copy sized for OCR."""
    grey = ImageOps.grayscale(picture)
    side = max(grey.size)
    if side < TARGET_SIDE:
        factor = min(2.0, TARGET_SIDE / side)
    elif side > MAX_SIDE:
        factor = MAX_SIDE / side
    else:
        return grey
    size = (max(1, round(grey.width * factor)), max(1, round(grey.height * factor)))
    return grey.resize(size, Image.Resampling.LANCZOS)


def is_text_picture(grey: Image.Image) -> bool:
    """Return whether a greyscale picture is mostly one background colour (a screenshot of
    text, a slide), not a photo."""
    pixels = np.asarray(grey, dtype=np.int16)
    commonest = int(np.bincount(pixels.ravel(), minlength=256).argmax())
    share = float((np.abs(pixels - commonest) <= BACKGROUND_TOLERANCE).mean())
    return share >= TEXT_PICTURE_SHARE


class TesseractOcr:
    """Tesseract through pytesseract: the default engine."""

    name = "tesseract"

    def __init__(
        self,
        *,
        lang: str = "eng",
        timeout: float = 30.0,
        min_confidence: float = 0.4,
        psm: int | None = None,
    ) -> None:
        """Set psm to force a page segmentation; None chooses one per picture."""
        self.lang = lang
        self.timeout = timeout
        self.min_confidence = min_confidence
        self.psm = psm

    def read(self, picture: Image.Image) -> OcrText:
        """Return the text lines Tesseract reads in picture."""
        import pytesseract

        prepared = prepare(picture)
        psm = self.psm or (BLOCK_PSM if is_text_picture(prepared) else LAYOUT_PSM)
        try:
            data = pytesseract.image_to_data(
                prepared,
                lang=self.lang,
                config=f"--psm {psm}",
                timeout=self.timeout,
                output_type=pytesseract.Output.DICT,
            )
        except pytesseract.TesseractNotFoundError as exc:
            raise ImageError(
                "ocr", "Tesseract is not installed (apt-get install tesseract-ocr)"
            ) from exc
        except (pytesseract.TesseractError, RuntimeError, OSError) as exc:
            # pytesseract raises RuntimeError on its timeout
            raise ImageError("ocr", f"Tesseract failed: {exc}") from exc
        return OcrText(engine=self.name, lines=tuple(self._lines(data)))

    def _lines(self, data: dict[str, list[Any]]) -> list[OcrLine]:
        lines: dict[tuple[int, int, int], list[tuple[str, float]]] = {}
        for n, word in enumerate(data["text"]):
            word = VERTICAL_BAR_I.get(str(word).strip(), str(word).strip())
            conf = float(data["conf"][n]) / 100
            if not word or conf < self.min_confidence:
                continue
            key = (int(data["block_num"][n]), int(data["par_num"][n]), int(data["line_num"][n]))
            lines.setdefault(key, []).append((word, conf))
        return [
            OcrLine(
                text=" ".join(w for w, _ in words),
                confidence=round(sum(c for _, c in words) / len(words), 3),
            )
            for words in lines.values()
        ]


RAPIDOCR_PACKAGES = ("rapidocr", "onnxruntime")
RAPIDOCR_INSTALL = "pip install 'factbot[rapidocr]'"


def rapidocr_missing() -> str | None:
    """Return why rapidocr cannot run here (a package of its extra is missing), or None."""
    missing = [name for name in RAPIDOCR_PACKAGES if not _installed(name)]
    if not missing:
        return None
    return f"the rapidocr OCR engine needs {', '.join(missing)}: {RAPIDOCR_INSTALL}"


def _installed(name: str) -> bool:
    """Return whether a top-level package can be imported, without importing it."""
    if name in sys.modules:
        return sys.modules[name] is not None  # None: an import that is known to fail
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


class RapidOcr:
    """rapidocr (PP-OCR ONNX models shipped in its wheel): the optional engine."""

    name = "rapidocr"

    def __init__(self, *, min_confidence: float = 0.5) -> None:
        """Raise ConfigError when the rapidocr extra is not installed."""
        reason = rapidocr_missing()
        if reason is not None:
            raise ConfigError(reason)
        self.min_confidence = min_confidence
        self._engine: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._engine is None:
                try:
                    from rapidocr import RapidOCR
                except ImportError as exc:
                    raise ImageError(
                        "ocr", f"rapidocr did not import ({RAPIDOCR_INSTALL})"
                    ) from exc
                self._engine = RapidOCR()
            return self._engine

    def read(self, picture: Image.Image) -> OcrText:
        """Return the text lines rapidocr reads in picture, top to bottom."""
        engine = self._load()
        try:
            result = engine(np.asarray(picture.convert("RGB")))
        except Exception as exc:
            raise ImageError("ocr", f"rapidocr failed: {exc}") from exc
        texts = list(getattr(result, "txts", None) or ())
        scores = list(getattr(result, "scores", None) or ())
        lines = [
            OcrLine(text=str(text).strip(), confidence=round(float(score), 3))
            for text, score in zip(texts, scores, strict=False)
            if str(text).strip() and float(score) >= self.min_confidence
        ]
        return OcrText(engine=self.name, lines=tuple(lines))


def ocr_engine(name: str) -> OcrEngine:
    """Return the OCR engine registered under name ("tesseract" or "rapidocr").

    Raises ConfigError when the engine's optional packages are not installed.
    """
    engines: dict[str, type[TesseractOcr] | type[RapidOcr]] = {
        "tesseract": TesseractOcr,
        "rapidocr": RapidOcr,
    }
    try:
        return engines[name]()
    except KeyError:
        raise ValueError(f"unknown OCR engine {name!r}; choose one of {sorted(engines)}") from None


async def read_text(image: LoadedImage, *, engine: OcrEngine, cpu: CpuPool | None) -> OcrText:
    """Return the text in an image, read off the event loop."""
    text = await run_cpu(cpu, engine.read, image.image)
    log.info(
        "image text read",
        extra={"image_id": image.id, "engine": engine.name, "lines": len(text.lines)},
    )
    return text
