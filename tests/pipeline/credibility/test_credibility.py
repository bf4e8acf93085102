"""Credibility: MUSE's rule, the importers, precedence, the seed list and the source policy."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.credibility.importers import (
    SCORE_HIGH,
    SCORE_LOW,
    SCORE_MEDIUM,
    SkippedLine,
    detect_format,
    import_sources,
    load_seed,
    mbfc_tier,
    parse_block_list,
    parse_mbfc_table,
    parse_perennial_json,
    parse_rating_table,
    parse_score_table,
    parse_tier_list,
)
from pipeline.credibility.policy import SourcePolicy
from pipeline.errors import SourceImportError
from pipeline.records.domain import SourceRating, Tier
from storage import Store
from storage.sources import SourceTable
from tests.conftest import REPO, SHARED_DATA

CREDIBILITY = SHARED_DATA / "credibility"
H, M, L, X, B, U = Tier.HIGH, Tier.MEDIUM, Tier.LOW, Tier.UNUSABLE, Tier.BLOCKED, Tier.UNRATED


@pytest.fixture
def sources(tmp_path: Path) -> Iterator[SourceTable]:
    with Store.open(tmp_path / "f.db") as store:
        yield store.sources


@pytest.fixture
def shared() -> Path:
    if not CREDIBILITY.is_dir():
        pytest.skip(f"shared credibility data not found at {CREDIBILITY}")
    return CREDIBILITY


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("factual", "bias", "tier", "reason"),
    [
        ("very high", "least biased", H, "factual reporting very high, least biased"),
        ("Very High", "Pro-Science", H, "pro-science"),
        ("very high", "pro- science", H, "pro-science"),
        ("very high", "left-center", M, "left-center"),
        ("high", "right-center bias", M, "right-center"),
        ("high", "least biased", M, "factual reporting high"),
        ("mostly factual", "center-left", L, "left-center"),
        ("Mostly Factual", "least biased", L, "mostly factual"),
        ("mixed", "least biased", X, "factual reporting mixed"),
        ("low", "", X, "factual reporting low"),
        ("very low", "extreme right", X, "factual reporting very low"),
        ("high", "right", X, "bias right"),
        ("high", "far-left", X, "bias far left"),
        ("very high", "conspiracy-pseudoscience", X, "bias conspiracy-pseudoscience"),
        ("high", "right conspiracy – pseudoscience", X, "conspiracy"),
        ("high", "questionable", X, "bias questionable"),
        ("high", "satire", X, "bias satire"),
        ("high", "", U, "not rated"),
        ("", "least biased", U, "not rated"),
        ("unknown", "not rated", U, "not rated"),
    ],
)
def test_mbfc_tier(factual: str, bias: str, tier: Tier, reason: str) -> None:
    got, why = mbfc_tier(factual, bias)
    assert got is tier
    assert reason in why


def test_every_bias_value_in_the_mbfc_scrape_is_understood(shared: Path) -> None:
    text = (shared / "mbfc_idiap.csv").read_text(encoding="utf-8")
    rows = parse_mbfc_table(text, origin="t", skipped=(skipped := []))
    unrated = {s.text.split(",")[2] for s in skipped if s.reason.startswith("not rated")}
    assert unrated == {""}  # "not rated"/"unrated" rows all have low factuality: UNUSABLE
    high = [r.details for r in rows if r.tier is H]
    assert high and all(d["factual_reporting"] == "very high" for d in high)
    assert all("least" in d["bias"] or "science" in d["bias"] for d in high)


def test_parse_tier_list_reports_garbage_with_line_numbers() -> None:
    lines = ["# MUSE high", "www.Reuters.com", "", "bemidji pioneer", "apnews.com  # wire", "x.con"]
    skipped: list[SkippedLine] = []
    ratings = parse_tier_list(lines, tier=H, origin="high.txt", skipped=skipped)
    assert [(r.domain, r.tier, r.origin) for r in ratings] == [
        ("reuters.com", H, "high.txt"),
        ("apnews.com", H, "high.txt"),
    ]
    assert [(s.line, s.text) for s in skipped] == [(4, "bemidji pioneer"), (6, "x.con")]
    assert "spaces" in skipped[0].reason and "public suffix" in skipped[1].reason


def test_parse_block_list_folds_case_and_duplicates() -> None:
    skipped: list[SkippedLine] = []
    lines = ["Infowars.com", "INFOWARS.COM", "www.rt.com", "ANews24.org/"]
    ratings = parse_block_list(lines, origin="block.txt", skipped=skipped)
    assert [(r.domain, r.tier) for r in ratings] == [
        ("infowars.com", B),
        ("rt.com", B),
        ("anews24.org", B),
    ]
    assert skipped == [SkippedLine(2, "infowars.com is already rated on line 1", "INFOWARS.COM")]


def test_parse_mbfc_table_keeps_the_less_credible_duplicate() -> None:
    text = (
        "source,country,bias,factual_reporting\n"
        "c-span.org,usa,least biased,very high\n"
        "c-span.org,usa,least biased,high\n"
        ",usa,left,high\n"
        "daily.example,usa,,high\n"
        "too,many,fields,here,x\n"
    )
    skipped: list[SkippedLine] = []
    ratings = parse_mbfc_table(text, origin="mbfc.csv", skipped=skipped)
    assert [(r.domain, r.tier) for r in ratings] == [("c-span.org", M)]
    assert ratings[0].details["line"] == 3
    assert [s.line for s in skipped] == [2, 4, 5, 6]
    assert "rated lower on line 3" in skipped[0].reason
    assert "expected 4 fields, found 5" in skipped[3].reason


def test_parse_score_table_thresholds_and_bad_rows() -> None:
    text = (
        "domain,pc1,other\n"
        "top.com,0.95,1\n"
        "mid.com,0.68,1\n"
        "low.com,0.64,1\n"
        "bad.com,0.2,1\n"
        "nan.com,NA,1\n"
        "big.com,1.5,1\n"
        "short.com\n"
    )
    skipped: list[SkippedLine] = []
    ratings = parse_score_table(text, origin="lin.csv", skipped=skipped)
    assert [(r.domain, r.tier) for r in ratings] == [
        ("top.com", H),
        ("mid.com", M),
        ("low.com", L),
        ("bad.com", X),
    ]
    assert ratings[3].reason == "quality score 0.20 < 0.64"
    assert [(s.line, s.reason) for s in skipped] == [
        (6, "score 'NA' is not a number"),
        (7, "score '1.5' is not in [0, 1]"),
        (8, "expected 3 fields, found 1"),
    ]
    custom = parse_score_table(text, origin="lin.csv", high=0.99, medium=0.9, low=0.1)
    assert [r.tier for r in custom] == [M, L, L, L]
    with pytest.raises(ValueError, match="thresholds"):
        parse_score_table(text, origin="lin.csv", high=0.5, medium=0.9, low=0.1)


def test_parse_perennial_json() -> None:
    skipped: list[SkippedLine] = []
    text = '{"afp.com": 1, "TV.com": 0, "amazon.com": -1, "x.com": -2, "y.com": 7}'
    ratings = parse_perennial_json(text, origin="wp.json", skipped=skipped)
    assert [(r.domain, r.tier) for r in ratings] == [
        ("afp.com", M),
        ("tv.com", L),
        ("amazon.com", X),
        ("x.com", X),
    ]
    assert skipped[0].line == 5


@pytest.mark.parametrize(
    ("name", "text", "fmt"),
    [
        ("high.txt", "reuters.com\n", "tiers"),
        ("list", "reuters.com\n", "tiers"),
        ("wp.json", '{"a.com": 1}', "perennial"),
        ("mbfc.csv", "source,country,bias,factual_reporting\n", "mbfc"),
        ("lin.csv", "domain,pc1,afm\n", "scores"),
        ("mine.csv", "domain,tier,reason\n", "ratings"),
    ],
)
def test_detect_format(name: str, text: str, fmt: str) -> None:
    assert detect_format(Path(name), text) == fmt


def test_detect_format_rejects_an_unknown_table() -> None:
    with pytest.raises(SourceImportError, match="unknown table header"):
        detect_format(Path("x.csv"), "name,rating\n")


def test_import_needs_a_tier_for_a_plain_list(sources: SourceTable, tmp_path: Path) -> None:
    path = write(tmp_path, "list.txt", "reuters.com\n")
    with pytest.raises(SourceImportError, match=r"--tier .*--format blocklist"):
        import_sources(sources, path)
    report = import_sources(sources, path, tier=H)
    assert (report.fmt, report.read, report.written, report.by_tier) == ("tiers", 1, 1, {"high": 1})
    assert sources.get("reuters.com") == SourceRating(
        "reuters.com", H, "high in list.txt", "list.txt", {"line": 1}
    )


@pytest.mark.parametrize(
    ("name", "content", "kwargs", "message"),
    [
        ("t.csv", "domain,pc1\na.com,0.5\n", {"tier": H}, "--tier applies only"),
        ("t.txt", "a.com\n", {"fmt": "nope"}, "unknown format"),
        ("t.txt", "a.com\n", {"fmt": "blocklist", "origin": "seed"}, "reserved"),
        ("t.txt", "a.com\n".encode("utf-16"), {"fmt": "blocklist"}, "UTF-16"),
        ("t.csv", "domain,bias\na.com,x\n", {"fmt": "mbfc"}, "no factual_reporting column"),
    ],
)
def test_import_refuses_unusable_requests(
    sources: SourceTable,
    tmp_path: Path,
    name: str,
    content: str | bytes,
    kwargs: dict[str, object],
    message: str,
) -> None:
    with pytest.raises(SourceImportError, match=message):
        import_sources(sources, write(tmp_path, name, content), **kwargs)  # type: ignore[arg-type]


def test_import_of_a_missing_file_says_so(sources: SourceTable, tmp_path: Path) -> None:
    with pytest.raises(SourceImportError, match="cannot read"):
        import_sources(sources, tmp_path / "absent.txt", fmt="blocklist")


def test_import_reports_non_utf8_lines_and_keeps_the_rest(
    sources: SourceTable, tmp_path: Path
) -> None:
    path = write(tmp_path, "block.txt", b"good.com\nbad\xff.com\nfine.org\n")
    report = import_sources(sources, path, fmt="blocklist")
    assert report.written == 2 and report.read == 3
    assert report.skipped == (SkippedLine(2, "line is not valid UTF-8", "bad\ufffd.com"),)
    assert "not valid UTF-8" in report.notes[0]
    assert report.problems[0] == report.notes[0]


def test_block_wins_over_a_later_tier_import(sources: SourceTable, tmp_path: Path) -> None:
    import_sources(sources, write(tmp_path, "block.txt", "bad.com\n"), fmt="blocklist")
    report = import_sources(sources, write(tmp_path, "t.txt", "good.com\nbad.com\n"), tier=H)
    assert report.written == 1
    assert report.skipped == (
        SkippedLine(2, "bad.com stays blocked (blocked by block.txt)", "bad.com"),
    )
    assert sources.get("bad.com").tier is B  # type: ignore[union-attr]
    # Otherwise the last import wins, including a later block over a tier.
    import_sources(sources, write(tmp_path, "low.txt", "good.com\n"), tier=L)
    assert sources.get("good.com").tier is L  # type: ignore[union-attr]
    import_sources(sources, write(tmp_path, "b2.txt", "good.com\n"), fmt="blocklist")
    assert sources.get("good.com").tier is B  # type: ignore[union-attr]


def test_seed_list_is_clean_and_covers_the_basics() -> None:
    path = REPO / "pipeline" / "data" / "seed_sources.csv"
    skipped: list[SkippedLine] = []
    ratings = parse_rating_table(path.read_text(encoding="utf-8"), origin="seed", skipped=skipped)
    assert skipped == []
    assert 40 <= len(ratings) <= 120
    tiers = {r.domain: r.tier for r in ratings}
    for domain in ("politifact.com", "factcheck.afp.com", "reuters.com", "apnews.com", "who.int"):
        assert tiers[domain] is H
    # Wikipedia, which the keyless provider searches, is citable but last among rated sources:
    # with unrated web results not cited by default, unseeded it would be searched for nothing.
    assert tiers["wikipedia.org"] is L
    assert set(tiers.values()) - {tiers["wikipedia.org"]} <= {H, M}


def test_seed_never_overwrites_an_operator_import(sources: SourceTable, tmp_path: Path) -> None:
    import_sources(sources, write(tmp_path, "mine.txt", "snopes.com\n"), tier=L)
    written = load_seed(sources)
    assert written >= 40
    assert sources.get("snopes.com").origin == "mine.txt"  # type: ignore[union-attr]
    assert sources.get("reuters.com").origin == "seed"  # type: ignore[union-attr]
    assert load_seed(sources) == written  # reloading refreshes only its own rows
    import_sources(sources, write(tmp_path, "b.txt", "reuters.com\n"), fmt="blocklist")
    assert sources.get("reuters.com").tier is B  # type: ignore[union-attr]


@pytest.fixture
def policy_table(sources: SourceTable) -> SourceTable:
    sources.upsert_many(
        [
            SourceRating("apple.com", X, "quality score 0.61 < 0.64", "lin.csv"),
            SourceRating("apple.com/apple-news", L, "low in low.txt", "low.txt"),
            SourceRating("bbc.co.uk", M, "generally reliable", "wp.json"),
            SourceRating("sport.bbc.co.uk", L, "test", "t.txt"),
            SourceRating("infowars.com", B, "on block list", "block.txt"),
        ]
    )
    return sources


@pytest.mark.parametrize(
    ("url", "key", "tier"),
    [
        ("https://www.apple.com/apple-news/story-1", "apple.com/apple-news", L),
        ("https://apple.com/apple-news", "apple.com/apple-news", L),
        ("https://www.apple.com/apple-newsroom/2024", "apple.com", X),
        ("https://news.bbc.co.uk/1/hi/world", "bbc.co.uk", M),
        ("www.bbc.co.uk", "bbc.co.uk", M),
        ("https://m.sport.bbc.co.uk/football", "sport.bbc.co.uk", L),
        ("http://INFOWARS.com/x?y=1", "infowars.com", B),
    ],
)
def test_policy_rates_the_most_specific_entry(
    policy_table: SourceTable, url: str, key: str, tier: Tier
) -> None:
    rating = SourcePolicy(policy_table).rate(url)
    assert (rating.domain, rating.tier) == (key, tier)


def test_policy_unrated_and_citable(policy_table: SourceTable) -> None:
    allow = SourcePolicy(policy_table, unrated="allow")
    exclude = SourcePolicy(policy_table, unrated="exclude")
    local = SourcePolicy(policy_table)  # the default
    unrated = allow.rate("https://www.example.org/a")
    assert (unrated.domain, unrated.tier, unrated.reason) == (
        "example.org",
        U,
        "no rating for example.org",
    )
    assert allow.citable(unrated) and not exclude.citable(unrated)
    assert allow.citable(unrated, web=True) and not exclude.citable(unrated, web=True)
    # local: the operator's index is vetted, the open web is not
    assert local.unrated == "local"
    assert local.citable(unrated) and not local.citable(unrated, web=True)
    assert allow.rate("not a url").tier is U
    assert allow.rate("http://127.0.0.1:8000/x").reason == "no rating for 127.0.0.1"
    for tier, citable in [(H, True), (M, True), (L, True), (X, False), (B, False)]:
        assert allow.citable(SourceRating("a.com", tier, "", "t")) is citable
        assert exclude.citable(SourceRating("a.com", tier, "", "t")) is citable
        assert local.citable(SourceRating("a.com", tier, "", "t"), web=True) is citable
    with pytest.raises(ValueError, match="unrated"):
        SourcePolicy(policy_table, unrated="maybe")  # type: ignore[arg-type]


def test_policy_caches_per_instance(policy_table: SourceTable) -> None:
    policy = SourcePolicy(policy_table)
    assert policy.rate("https://new.example.net/").tier is U
    policy_table.upsert_many([SourceRating("example.net", H, "r", "t")])
    assert policy.rate("https://new.example.net/").tier is U  # cached
    assert SourcePolicy(policy_table).rate("https://new.example.net/").tier is H


def test_real_mbfc_import_gives_sensible_tiers(sources: SourceTable, shared: Path) -> None:
    report = import_sources(sources, shared / "mbfc_idiap.csv")
    assert report.fmt == "mbfc" and report.read == 4497
    assert report.read == report.written + len(report.skipped)
    # This scrape predates MBFC's "mostly factual", so nothing lands in LOW.
    assert 60 <= report.by_tier["high"] <= 150
    assert 1500 <= report.by_tier["medium"] <= 2300
    assert 1500 <= report.by_tier["unusable"] <= 2300
    assert "low" not in report.by_tier
    policy = SourcePolicy(sources)
    assert policy.rate("https://www.reuters.com/world/x").tier is H
    assert policy.rate("https://www.infowars.com/posts/x").tier is X


def test_real_block_list_beats_later_muse_tiers(sources: SourceTable, shared: Path) -> None:
    block = import_sources(sources, shared / "averitec_misinfo_domains.txt", fmt="blocklist")
    assert block.written > 1000
    assert any("public suffix" in s.reason for s in block.skipped)  # TopInfoPost.con
    kept = 0
    for tier in (H, M, L):
        path = shared / f"publisher_priority_{tier.value}.txt"
        report = import_sources(sources, path, tier=tier)
        kept += sum("stays blocked" in s.reason for s in report.skipped)
        if tier is M:
            garbage = {s.line for s in report.skipped if "stays blocked" not in s.reason}
            assert garbage == {179, 209, 1564}
    assert kept > 0
    assert sources.get("firstpost.com").tier is B  # type: ignore[union-attr]
    policy = SourcePolicy(sources)
    assert policy.rate("https://www.apple.com/apple-news/x").domain == "apple.com/apple-news"


def test_score_thresholds_calibration(shared: Path) -> None:
    """Recompute the figures quoted in pipeline/credibility.py's docstring."""
    ref: dict[str, Tier] = {}
    for tier in (H, M, L):
        lines = (shared / f"publisher_priority_{tier.value}.txt").read_text().splitlines()
        ref.update((r.domain, tier) for r in parse_tier_list(lines, tier=tier, origin="muse"))
    mbfc = parse_mbfc_table((shared / "mbfc_idiap.csv").read_text(encoding="utf-8"), origin="m")
    ref.update((r.domain, X) for r in mbfc if r.tier is X and r.domain not in ref)
    lin = (shared / "lin2023_domain_ratings.csv").read_text(encoding="utf-8")
    pc1 = {r.domain: r.tier for r in parse_score_table(lin, origin="lin")}
    pairs = [(ref[d], pc1[d]) for d in ref if d in pc1]
    agree = sum(a is b for a, b in pairs) / len(pairs)
    usable = sum((a is X) == (b is X) for a, b in pairs) / len(pairs)
    tp = sum(a is H and b is H for a, b in pairs)
    precision = tp / sum(b is H for _, b in pairs)
    recall = tp / sum(a is H for a, _ in pairs)
    by_mbfc = {r.domain: r.tier for r in mbfc}
    both = [(by_mbfc[d], pc1[d]) for d in by_mbfc if d in pc1]
    mbfc_agree = sum(a is b for a, b in both) / len(both)
    mbfc_usable = sum((a is X) == (b is X) for a, b in both) / len(both)
    print(
        f"thresholds {SCORE_HIGH}/{SCORE_MEDIUM}/{SCORE_LOW}:"
        f" reference {Counter(a.value for a, _ in pairs)}"
        f" 4-tier {agree:.3f} usable {usable:.3f} HIGH P {precision:.3f} R {recall:.3f};"
        f" vs mbfc_tier n={len(both)} tier {mbfc_agree:.3f} usable {mbfc_usable:.3f}"
    )
    assert usable >= 0.84 and agree >= 0.72 and recall >= 0.75 and mbfc_usable >= 0.78
