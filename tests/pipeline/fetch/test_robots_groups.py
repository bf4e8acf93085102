"""robots.txt through protego: which group is ours, how a refusal names its rule, odd paths."""

from __future__ import annotations

import pytest

from pipeline.fetch.robots import parse_robots


def refusal(robots: str, path: str, product: str = "factbot") -> str | None:
    return parse_robots(robots, product).refusal(path)


@pytest.mark.parametrize(
    "line",
    [
        "User-agent: factbot",
        "User-agent: FACTBOT",
        "User-agent: factbot/9.9 (+https://example.org)",
        "User agent: factbot",
        "useragent:factbot",
        "User-agent factbot",
        "User-agent: factbot  # that is us",
    ],
)
def test_every_spelling_of_our_group_is_ours(line: str) -> None:
    robots = f"{line}\nDisallow: /ours\n\nUser-agent: *\nDisallow: /everyone\n"
    assert refusal(robots, "/ours") == "robots.txt disallows '/ours'"
    assert refusal(robots, "/everyone") is None  # our group, not the `*` one, applies


@pytest.mark.parametrize("other", ["fact", "f", "factbot-news", "factbot*", "otherbot", "Bot"])
def test_a_group_for_another_token_is_not_ours(other: str) -> None:
    robots = f"User-agent: {other}\nDisallow: /\n\nUser-agent: *\nDisallow: /everyone\n"
    assert refusal(robots, "/page") is None
    assert refusal(robots, "/everyone") == "robots.txt disallows '/everyone'"


def test_a_group_may_name_several_agents_and_our_groups_are_merged() -> None:
    robots = (
        "User-agent: otherbot\nUser-agent: factbot\nDisallow: /a\n\n"
        "User-agent: *\nDisallow: /\n\n"
        "User-agent: factbot\nDisallow: /b\n"
    )
    assert refusal(robots, "/a/x") and refusal(robots, "/b/x")
    assert refusal(robots, "/c") is None
    assert refusal(robots, "/c", product="otherbot") is None  # otherbot's group has /a only
    assert refusal(robots, "/c", product="thirdbot") == "robots.txt disallows '/'"


def test_no_product_token_means_the_star_group() -> None:
    robots = "User-agent: factbot\nDisallow: /ours\n\nUser-agent: *\nDisallow: /all\n"
    assert refusal(robots, "/ours", product="") is None
    assert refusal(robots, "/all", product="") is not None


def test_no_group_for_us_and_no_star_group_allows_everything() -> None:
    assert refusal("User-agent: otherbot\nDisallow: /\n", "/x") is None
    assert refusal("", "/x") is None
    assert refusal("Disallow: /\n", "/x") is None  # a rule outside any group binds nobody


@pytest.mark.parametrize(
    ("rules", "path", "named"),
    [
        ("Disallow: /*.pdf$", "/a/b.pdf", "/*.pdf$"),
        ("Allow: /\nDisallow: /search", "/search?q=x", "/search"),
        ("Disallow: /a\nDisallow: /a/b\nAllow: /a/b/c", "/a/b/x", "/a/b"),  # the longest
    ],
)
def test_a_refusal_names_the_rule_that_won(rules: str, path: str, named: str) -> None:
    assert refusal(f"User-agent: *\n{rules}\n", path) == f"robots.txt disallows {named!r}"


@pytest.mark.parametrize(
    ("rule", "path", "ok"),
    [
        ("Disallow: //double", "//double/x", False),  # not read as a host
        ("Disallow: /café", "/caf%C3%A9", False),  # percent-encoding compared decoded
        ("Disallow: /caf%c3%a9", "/café", False),
        ("Disallow: /x?", "/x?", False),
        ("Disallow: /x?", "/x", True),
        ("Disallow: /", "", False),  # an empty path is "/"
        ("Disallow: /robots.txt", "/robots.txt", True),  # always allowed
    ],
)
def test_odd_paths(rule: str, path: str, ok: bool) -> None:
    assert (refusal(f"User-agent: *\n{rule}\n", path) is None) is ok
