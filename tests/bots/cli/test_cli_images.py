"""`factbot check --image`: files and URLs are read as a platform attachment is, end to end."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from bots.cli.main import main
from tests.conftest import FIXTURES
from tests.pipeline.image.uploads import CLAIM, PDF, SVG, claim_png, truncated_png


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("FACTBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("FACTBOT_IMAGES__MAX_BYTES", "200000")
    monkeypatch.chdir(tmp_path)

    def invoke(*args: str, input: bytes | str | None = None) -> Result:
        return CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)

    result = invoke("ingest", "--no-progress", str(FIXTURES / "corpus.jsonl"))
    assert result.exit_code == 0, result.output
    return invoke


def test_help_shows_the_image_option(run) -> None:  # type: ignore[no-untyped-def]
    shown = run("check", "--help")
    assert "--image FILE_OR_URL" in shown.output and "factbot check --image" in shown.output


def test_a_screenshot_is_checked_and_bad_images_are_said_with_their_reasons(  # type: ignore[no-untyped-def]
    run, tmp_path: Path
) -> None:
    (tmp_path / "shot.png").write_bytes(claim_png())
    (tmp_path / "photo.jpg").write_bytes(PDF)  # a PDF named .jpg
    (tmp_path / "broken.png").write_bytes(truncated_png())
    (tmp_path / "big.png").write_bytes(os.urandom(300_000))  # over the 200,000-byte limit
    result = run(
        "check",
        "--json",
        "--image",
        "shot.png",
        "--image",
        "photo.jpg",
        "--image",
        "broken.png",
        "--image",
        "big.png",
        "--image",
        "missing.png",
        "--image",
        "gopher://example.org/a.png",
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    (read,) = data["images"]["read"]
    assert read["name"] == "shot.png" and read["url"] is None and read["origin"] == "attachment"
    assert CLAIM in " ".join(read["text"].split())
    assert any(CLAIM.lower() in c["text"].lower() for c in data["claims"])
    assert data["verdict"] == "false"
    reasons = {f["name"]: f["reason"] for f in data["images"]["not_read"]}
    assert reasons["photo.jpg"] == "the file is a PDF document, not an image"
    assert "truncated or corrupt" in reasons["broken.png"]
    notes = " ".join(data["notes"])
    assert "'big.png' was not read: it is 300,000 bytes, larger than the 200,000" in notes
    assert "'missing.png' was not read: No such file or directory" in notes
    assert "only http(s) image links are fetched" in notes
    assert "note: The image 'big.png' was not read" in result.stderr
    # The uploaded bytes are in the stored post only, never in the stored report.
    shown = run("show", data["id"])
    assert "Images:" in shown.output and "uploaded shot.png): read" in shown.output
    assert "not read (uploaded photo.jpg): the file is a PDF document, not an image" in shown.output


def test_an_image_alone_that_cannot_be_read_is_a_clear_error(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "logo.jpg").write_bytes(SVG)
    result = run("check", "--image", "logo.jpg")
    assert result.exit_code == 2
    assert "SVG is a vector format that can carry scripts" in result.stderr
    assert "Traceback" not in result.output


def test_an_image_can_come_on_standard_input_with_the_text_as_argument(run) -> None:  # type: ignore[no-untyped-def]
    text = "Drinking bleach protects you against COVID-19."
    result = run("check", "--json", text, "--image", "-", input=PDF)
    assert result.exit_code == 0, result.output  # the check goes on with the text
    data = json.loads(result.stdout)
    assert data["verdict"] == "false" and data["images"]["read"] == []
    (failed,) = data["images"]["not_read"]
    assert failed == {
        "url": None,
        "name": "stdin",
        "origin": "attachment",
        "reason": "the file is a PDF document, not an image",
    }
    assert "The image could not be read (the file is a PDF document" in data["correction"]["note"]
    both = run("check", "-", "--image", "-", input=b"x")
    assert both.exit_code == 2 and "not both" in both.output
    nothing = run("check")
    assert nothing.exit_code == 2 and "at least one --image" in nothing.output
