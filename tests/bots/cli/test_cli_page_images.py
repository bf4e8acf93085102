"""`factbot ingest` keeps the main images of the pages it ingests, as its setting says."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from bots.cli.main import main
from pipeline.image.hashing import hash_picture
from storage import Store
from tests.bots.app.test_out_of_context import page
from tests.pipeline.image.images import encode, photo
from tests.support.httpserver import serve


@pytest.mark.parametrize(("cap", "kept"), [("4", 1), ("0", 0)])
def test_ingest_keeps_a_pages_images(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cap: str, kept: int
) -> None:
    monkeypatch.setenv("FACTBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("FACTBOT_FETCH__ALLOWED_NETWORKS", '["127.0.0.1/32"]')
    monkeypatch.setenv("FACTBOT_FETCH__RESPECT_ROBOTS", "false")
    monkeypatch.setenv("FACTBOT_IMAGE_INDEX__PAGE_IMAGES", cap)
    monkeypatch.chdir(tmp_path)  # no stray .env from the working tree
    picture = photo((480, 360), seed=31)
    with serve() as server:
        server.add("/img/a.jpg", encode(picture, "JPEG"), "image/jpeg")
        url = server.add(
            "/2012/a",
            page(server.base, title="Flooding in Bangkok", image="/img/a.jpg",
                 published="2012-05-03T08:00:00Z"),
        )  # fmt: skip
        result = CliRunner().invoke(main, ["ingest", "--no-progress", url], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert f"1 added, 0 updated, 0 unchanged, 0 skipped; 1 passages, {kept} images" in result.output
    with Store.open(tmp_path / "data" / "factbot.db") as store:
        found = store.images.similar(hash_picture(picture))
    assert [(hit.page_url, hit.caption) for hit, _ in found] == [(url, "Flooding in Bangkok")][
        :kept
    ]
