"""The generated reference pages of docs/ are what the code generates now."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bots.cli import docs

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "reference"


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return docs.generate()


def test_every_generated_page_is_up_to_date(pages: dict[str, str]) -> None:
    # On failure: run `factbot docs generate` and commit docs/reference/.
    assert docs.stale(REFERENCE, pages) == []


def test_a_changed_page_is_seen_as_stale(pages: dict[str, str], tmp_path: Path) -> None:
    for name, text in pages.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert docs.stale(tmp_path, pages) == []
    (tmp_path / "settings.md").write_text(pages["settings.md"] + "edited\n", encoding="utf-8")
    (tmp_path / "cli.md").unlink()
    assert docs.stale(tmp_path, pages) == ["cli.md", "settings.md"]


def test_every_setting_has_a_description() -> None:
    assert docs.undocumented_settings() == []


def test_every_route_has_a_description() -> None:
    assert docs.undocumented_routes() == []


def test_a_route_without_a_docstring_is_named() -> None:
    schema = {"paths": {"/a": {"get": {"description": "Does a."}, "post": {"summary": "B"}}}}
    assert docs.undocumented_routes(schema) == ["POST /a"]


def test_the_cli_page_holds_every_command(pages: dict[str, str]) -> None:
    text = pages["cli.md"]
    for command in ("check", "serve", "worker", "doctor", "eval averitec", "train stance"):
        assert f"## `factbot {command}`" in text
    assert "/work/" not in text and "/home/" not in text  # no machine's own folders


def test_the_http_page_holds_the_api(pages: dict[str, str]) -> None:
    text = pages["http-api.md"]
    for endpoint in ("POST /api/checks", "GET /api/jobs/{job_id}", "GET /readyz"):
        assert f"### `{endpoint}`" in text
    assert "| `wait` | query | number | no | seconds to wait for the result" in text


def test_generation_is_deterministic_whatever_the_environment(
    pages: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Settings in the environment, a .env file or a narrow terminal must not leak in.
    monkeypatch.setenv("FACTBOT_DASHBOARD__ENABLED", "false")
    monkeypatch.setenv("FACTBOT_SEARCH__ENABLED", "false")
    monkeypatch.setenv("COLUMNS", "40")
    assert docs.generate() == pages


ROOT = REFERENCE.parents[1]
_LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("page", ["README.md", "CONTRIBUTING.md", "CHANGELOG.md"])
def test_the_top_level_pages_link_to_files_that_exist(page: str) -> None:
    # mkdocs checks the links inside docs/; these pages lie outside it.
    text = (ROOT / page).read_text(encoding="utf-8")
    targets = [t.split("#", 1)[0] for t in _LINK.findall(text) if "://" not in t]
    assert targets, "no relative links found: the pattern is wrong"
    assert [t for t in targets if t and not (ROOT / t).exists()] == []


def test_the_readme_stays_a_front_page() -> None:
    assert len((ROOT / "README.md").read_bytes()) <= 8_000  # results live on docs/results


def test_a_shared_data_default_is_wrapped_the_same_wherever_the_checkout_lies() -> None:
    import click

    checkout = Path(docs.__file__).resolve().parents[2]
    # Long enough that "../shared/<name>" just fits the help's width and the absolute path of
    # any checkout does not: made relative only after wrapping, the line would break.
    name = "c" * (docs.WIDTH - len("  --index PATH  [default: ../shared/.jsonl]") - 2) + ".jsonl"

    def helped(default: Path) -> str:
        @click.command()
        @click.option(
            "--index", type=click.Path(path_type=Path), default=default, show_default=True
        )
        def cmd(index: Path) -> None:
            """Read the index."""

        width = {"terminal_width": docs.WIDTH, "max_content_width": docs.WIDTH}
        ctx = click.Context(cmd, info_name="cmd", **width)
        with docs._relative_defaults(cmd):
            text = docs._relative(cmd.get_help(ctx))
        assert cmd.params[0].default == default  # restored
        return text

    relative = helped(Path("../shared") / name)
    assert f"[default: ../shared/{name}]" in relative  # one line
    assert helped(checkout.parent / "shared" / name) == relative
    assert "[default: /tmp/x.db]" in helped(Path("/tmp/x.db"))  # not shared data: as given
