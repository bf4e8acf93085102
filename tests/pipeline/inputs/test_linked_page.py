"""A post that is little more than a shared link is checked on the page it shares."""

from __future__ import annotations

import pytest

from pipeline.errors import EmptyPostError
from pipeline.inputs.posts import ensure_checkable, linked_page
from pipeline.records.domain import Post


def _post(text: str, links: tuple[str, ...] = (), images: tuple[str, ...] = ()) -> Post:
    return Post("p", "slack", "1", text, links=links, image_refs=images)


@pytest.mark.parametrize(
    ("text", "links", "expected"),
    [
        ("is this true? https://example.org/a", (), "https://example.org/a"),
        ("<https://example.org/a>", (), "https://example.org/a"),
        ("look", ("https://example.org/b",), "https://example.org/b"),
        (
            "The minister said on Monday that taxes will rise by ten percent https://x.org/a",
            (),
            None,
        ),
        ("no link at all", (), None),
        ("ftp://example.org/file", (), None),
    ],
)
def test_which_posts_are_read_through_their_link(
    text: str, links: tuple[str, ...], expected: str | None
) -> None:
    assert linked_page(_post(text, links)) == expected


def test_a_link_share_is_checkable_and_an_empty_post_is_not() -> None:
    ensure_checkable(_post("https://example.org/a"))
    ensure_checkable(_post("🔥", images=("https://example.org/i.png",)))
    assert linked_page(_post("x", images=("https://example.org/i.png",))) is None
    with pytest.raises(EmptyPostError):
        ensure_checkable(_post("😂😂 🔥"))
