"""Turning what a user gives (text, a URL, images) into a Post.

Images are `Post.image_refs`, as a platform attachment is: an http(s) URL the image stage
fetches, or a `data:` URI holding bytes the user uploaded (`pipeline.image.intake` reads both).

Every post made here says what it is (`Post.kind`): `text` (typed text, maybe with images),
`image` (images alone) or `page`. A request to check a page is a post of kind `page` made of its
link (`page_request`); whoever runs the check fetches the page (`with_requested_page`), so a
request handler never waits on a fetch.

Failure policy: empty or oversized text raises InputError with the reason (text may be empty
when the post has images); a URL that the fetch policy refuses raises UnsafeURLError (a
malformed one or a scheme other than http(s) at once, in `page_request`); a page without usable
text raises ExtractionError.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from pipeline.errors import EmptyPostError, ExtractionError, FetchError, InputError
from pipeline.evidence.pages import extract_fetched
from pipeline.fetch.addresses import check_url
from pipeline.fetch.fetcher import Fetcher
from pipeline.records.domain import Post, new_id, utcnow
from pipeline.util.cpu import CpuPool
from pipeline.util.text import URL_RE, clean_post_text


def post_from_text(
    text: str,
    *,
    max_chars: int,
    platform: str = "cli",
    platform_id: str | None = None,
    author: str | None = None,
    created_at: datetime | None = None,
    image_refs: Sequence[str] = (),
) -> Post:
    """Return a post for text typed or sent by a user, with the images that came with it."""
    if (not text or not text.strip()) and not image_refs:
        raise EmptyPostError("the post is empty")
    if len(text) > max_chars:
        raise InputError(
            f"the post is {len(text):,} characters long; the limit is {max_chars:,} "
            "(FACTBOT_MAX_POST_CHARS)"
        )
    if "\x00" in text:
        raise InputError("the post contains NUL characters; send plain text")
    identifier = new_id()
    return Post(
        id=identifier,
        platform=platform,
        platform_id=platform_id or identifier,
        text=text,
        author=author,
        # Text typed into factbot has no publication time of its own: no automatic time bound.
        created_at=created_at,
        links=tuple(dict.fromkeys(URL_RE.findall(text))),
        image_refs=tuple(dict.fromkeys(image_refs)),
        kind="text" if text.strip() else "image",
    )


def ensure_checkable(post: Post) -> None:
    """Raise EmptyPostError when a post has neither words nor images to check.

    Adapters call it before they accept a request, so "nothing to check" is answered at once
    instead of after a queued job. A post that shares a link is checkable: the check reads the
    page (`with_linked_page`).
    """
    if post.image_refs or linked_page(post) is not None:
        return
    if not any(c.isalnum() for c in clean_post_text(post.text)):
        raise EmptyPostError(
            "the post has no text to check once links, mentions and emojis are removed"
        )


async def post_from_url(
    url: str, *, fetcher: Fetcher, max_chars: int, cpu: CpuPool | None = None
) -> Post:
    """Fetch a page and return a post made of its main text (truncated to max_chars).

    The post is the page as published (kind `post`): its text is what a check reads.
    """
    page = await fetcher.fetch(url)
    document = (await extract_fetched(page, cpu=cpu, fetched_at=utcnow())).document
    text = f"{document.title}\n{document.text}" if document.title else document.text
    identifier = new_id()
    return Post(
        id=identifier,
        platform="web",
        platform_id=identifier,
        text=text[:max_chars],
        url=page.url,
        author=document.publisher,
        created_at=document.published_at,
        links=(page.url,),
    )


PAGE = "web"  # the platform of a page given directly (by URL) rather than posted somewhere


def page_request(url: str, *, image_refs: Sequence[str] = ()) -> Post:
    """Return the post that asks for the page at url to be checked (its fetch comes later).

    Raise UnsafeURLError at once for what no fetch could take (a malformed URL, a scheme other
    than http(s), credentials); the address policy is the fetcher's, applied when it fetches.
    """
    url = url.strip()
    check_url(url)
    identifier = new_id()
    return Post(
        id=identifier,
        platform=PAGE,
        platform_id=identifier,
        text=url,
        url=url,
        links=(url,),
        image_refs=tuple(dict.fromkeys(image_refs)),
        kind="page",
    )


def requested_page(post: Post) -> str | None:
    """Return the URL a post of kind `page` asks for, or None for any other kind."""
    if post.kind != "page":
        return None
    if not post.url:
        raise InputError(f"post {post.id} asks for a page but names no URL")
    return post.url


async def with_requested_page(
    post: Post, *, fetcher: Fetcher, max_chars: int, cpu: CpuPool | None = None
) -> Post:
    """Return the page a post of kind `page` asks for, as a post with its ids and images.

    The page is the post: its text, its final URL, its publisher and its publication time
    (which bounds the evidence, as a post's time does). A post of any other kind is returned as
    it is; the page keeps kind `post` (it has been read), so calling this again does nothing.
    Fetch and extraction errors are the fetcher's (`post_from_url`).
    """
    url = requested_page(post)
    if url is None:
        return post
    page = await post_from_url(url, fetcher=fetcher, max_chars=max_chars, cpu=cpu)
    return replace(
        page,
        id=post.id,
        platform=post.platform,
        platform_id=post.platform_id,
        image_refs=post.image_refs,
    )


SHORT_WORDS = 8  # a post with fewer own words than this is "look at this <link>"


def linked_page(post: Post) -> str | None:
    """Return the link whose page is the real content of a post, or None.

    A post that is little more than a link ("is this true? https://…") says nothing checkable
    itself: the page it shares is what people read. Posts with images are left alone (the
    images carry the content), and so are posts with enough words of their own.
    """
    if post.image_refs:
        return None
    words = [w for w in clean_post_text(post.text).split() if any(c.isalnum() for c in w)]
    if len(words) >= SHORT_WORDS:
        return None
    links = [*post.links, *(m.group(0) for m in URL_RE.finditer(post.text))]
    web = [link for link in links if link.lower().startswith(("http://", "https://"))]
    return web[0] if web else None


async def with_linked_page(
    post: Post, *, fetcher: Fetcher, max_chars: int, cpu: CpuPool | None = None
) -> Post:
    """Return post with the text of the page it shares appended, when it is mostly a link.

    The post keeps its identity (platform, ids, author, time). A page that cannot be read
    fails the check only when the post has no words of its own to check instead: a refused or
    empty page as bad input (no retry helps), a failed fetch as itself (a retry may).
    """
    url = linked_page(post)
    if url is None:
        return post
    own = clean_post_text(post.text)
    has_words = any(c.isalnum() for c in own)
    try:
        page = await post_from_url(url, fetcher=fetcher, max_chars=max_chars, cpu=cpu)
    except (InputError, ExtractionError) as exc:
        if has_words:
            return post
        raise InputError(f"the shared page could not be read: {exc}") from exc
    except FetchError:
        if has_words:
            return post
        raise
    text = f"{own}\n\n{page.text}" if own else page.text
    return replace(post, text=text[:max_chars], links=tuple(dict.fromkeys((*post.links, url))))
