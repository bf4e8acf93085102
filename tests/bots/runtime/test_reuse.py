"""The reuse path: a stored check answers the same post, text, claims or a reworded copy only.

Real embedder (bundled MiniLM), real SQLite store, a FakeClock for the TTL. The reworded pairs
and same-topic negatives are from the calibration's held-out split (`bench.reuse_calibration`).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bench import reuse as bench_reuse
from bots.runtime.checking.reuse import ReuseIndex, normalise, numbers_in
from bots.settings import ReuseSettings, Settings
from pipeline.embedding.onnx import OnnxEmbedder
from pipeline.records.domain import (
    Check,
    Claim,
    ClaimVerdict,
    Correction,
    Document,
    Evidence,
    Label,
    Passage,
    Post,
    Tier,
    Verdict,
    new_id,
)
from storage import Store
from tests.support.clock import FakeClock

CLAIM = "The WHO confirmed that 5G towers spread the coronavirus in 2020."


def _post(
    text: str,
    *,
    platform_id: str | None = None,
    created: datetime | None = None,
    images: tuple[str, ...] = (),
) -> Post:
    identifier = new_id()
    return Post(
        id=identifier,
        platform="x",
        platform_id=platform_id or identifier,
        text=text,
        created_at=created,
        image_refs=images,
    )


def _check(
    post: Post,
    *,
    at: datetime,
    before: datetime | None = None,
    claims: bool = True,
    evidence: bool = True,
    label: Label = Label.FALSE,
) -> Check:
    claim = Claim(id=new_id(), post_id=post.id, position=0, text=post.text[:200])
    document = Document(
        id="d1", url="https://example.org/a", domain="example.org", title="A", text="Text."
    )
    items = (
        Evidence(
            id=new_id(),
            claim_id=claim.id,
            passage=Passage(id="p1", document_id="d1", position=0, text="Text."),
            document=document,
            relevance=0.8,
            tier=Tier.HIGH,
        ),
    )
    return Check(
        id=new_id(),
        post=post,
        claims=(claim,) if claims else (),
        evidence=items if evidence else (),
        verdict=Verdict(
            label=label, claims=(ClaimVerdict(claim_id=claim.id, label=label, rationale="r"),)
        ),
        correction=Correction(label=label, headline="c"),
        created_at=at,
        before=before if before is not None else post.created_at,
    )


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def index(store: Store, embedder: OnnxEmbedder, clock: FakeClock) -> ReuseIndex:
    return ReuseIndex(store.reuse, embedder, Settings().reuse, clock=clock)


async def _remember(index: ReuseIndex, clock: FakeClock, post: Post, **kw: object) -> Check:
    check = _check(post, at=clock.now(), **kw)  # type: ignore[arg-type]
    assert await index.remember(check) is True
    return check


def test_normalisation_drops_case_links_mentions_tags_emoji_and_punctuation() -> None:
    text = "RT @a: Vaccines CAUSE autism!!! 😱 https://t.co/x #health\n\n  ＦＵＬＬ stop."
    assert normalise(text) == "vaccines cause autism health full stop"
    assert numbers_in(normalise("Digest: March 26, 2020")) == frozenset({"26", "2020"})
    assert normalise("") == "" and normalise("👍 https://x.y @z") == ""


async def test_the_same_platform_post_is_found(index: ReuseIndex, clock: FakeClock) -> None:
    check = await _remember(index, clock, _post(CLAIM, platform_id="123"))
    clock.advance(60)
    hit = await index.find(_post("edited text, now about something else", platform_id="123"))
    assert hit is not None
    assert (hit.check_id, hit.reason, hit.similarity) == (check.id, "same post", 1.0)
    assert hit.age == timedelta(seconds=60)


async def test_the_same_text_pasted_again_is_found(index: ReuseIndex, clock: FakeClock) -> None:
    check = await _remember(index, clock, _post(CLAIM))
    pasted = _post(
        "RT @someone: the who CONFIRMED that 5G towers spread the coronavirus in 2020 🙄"
    )
    hit = await index.find(pasted)
    assert hit is not None and (hit.check_id, hit.reason) == (check.id, "same text")


async def test_the_same_claims_with_other_chatter_are_found(
    index: ReuseIndex, clock: FakeClock
) -> None:
    check = await _remember(index, clock, _post(f"Unbelievable!! {CLAIM} Is this real?"))
    hit = await index.find(_post(f"Wow.\n{CLAIM} 😱 What do you think?"))
    assert hit is not None and (hit.check_id, hit.reason) == (check.id, "same claims")


SHOT = "https://pbs.twimg.example/media/screenshot-1.jpg"
CHART = "https://pbs.twimg.example/media/chart-2.png"


async def test_a_post_with_images_reuses_only_a_check_of_the_same_text_and_images(
    index: ReuseIndex, clock: FakeClock
) -> None:
    await _remember(index, clock, _post(CLAIM))  # the words alone, checked earlier
    assert await index.find(_post(CLAIM, images=(SHOT,))) is None
    assert await index.find(_post(f"Wow.\n{CLAIM} 😱", images=(SHOT,))) is None  # claims
    imaged = await _remember(index, clock, _post(CLAIM, images=(SHOT, CHART)))
    hit = await index.find(_post(CLAIM.upper(), images=(CHART, SHOT, CHART)))  # order, repeats
    assert hit is not None and (hit.check_id, hit.reason) == (imaged.id, "same text")
    assert await index.find(_post(CLAIM, images=(SHOT,))) is None  # one image of the two
    only = await _remember(index, clock, _post("", images=(SHOT,)))  # an image, no words
    hit = await index.find(_post("", images=(SHOT,)))
    assert hit is not None and hit.check_id == only.id


async def test_a_text_only_post_does_not_reuse_a_check_of_the_same_text_with_images(
    index: ReuseIndex, clock: FakeClock
) -> None:
    await _remember(index, clock, _post(CLAIM, images=(SHOT,)))
    assert await index.find(_post(CLAIM)) is None  # not the same text, claims
    reworded = "The WHO has confirmed 5G towers spread the coronavirus in 2020!"  # cosine 0.976
    assert await index.find(_post(reworded)) is None  # nor a near duplicate


@pytest.mark.parametrize(
    ("stored", "reworded"),
    [
        (
            "As Many as 50 Percent of People with COVID-19 Aren’t Aware They Have the Virus",
            "50 Percent of People with COVID-19 Aren't Aware They Have Virus",
        ),
        (
            "COVID-19 Is Likely to Be the Third-Leading Cause of Death in the U.S. This Year",
            "COVID-19 Will Be Third-Leading Cause of Death in the U.S. This Year",
        ),
    ],
)
async def test_a_reworded_claim_is_a_near_duplicate(
    index: ReuseIndex, clock: FakeClock, stored: str, reworded: str
) -> None:
    check = await _remember(index, clock, _post(stored))
    hit = await index.find(_post(reworded))
    assert hit is not None and (hit.check_id, hit.reason) == (check.id, "near duplicate")
    assert Settings().reuse.near_duplicate_threshold <= hit.similarity < 1.0


@pytest.mark.parametrize(
    ("stored", "other"),
    [
        (  # the opposite claim about the same thing
            "COVID-19 Poses a Higher Risk for People with Asthma: What You Can Do",
            "Asthma may not increase the risk of severe COVID-19",
        ),
        (  # another decision about the same drug (cosine 0.963)
            "FDA Approves Remdesivir to Treat COVID-19",
            "FDA Expands Use of Remdesivir for COVID-19 Treatment",
        ),
        (  # cosine 0.995: only the numbers tell them apart
            "Coronavirus Daily Digest: March 20, 2020",
            "Coronavirus Daily Digest: March 26, 2020",
        ),
    ],
)
async def test_a_different_claim_on_the_same_topic_is_not_reused(
    index: ReuseIndex, clock: FakeClock, stored: str, other: str
) -> None:
    await _remember(index, clock, _post(stored))
    assert await index.find(_post(other)) is None


async def test_checks_expire_after_the_ttl(index: ReuseIndex, clock: FakeClock) -> None:
    await _remember(index, clock, _post(CLAIM))
    await _remember(index, clock, _post("50 Percent of People with COVID-19 Aren't Aware"))
    ttl = index.ttl.total_seconds()
    clock.advance(ttl - 1)
    assert await index.find(_post(CLAIM)) is not None
    near = _post("As Many as 50 Percent of People with COVID-19 Aren't Aware")
    assert await index.find(near) is not None
    clock.advance(2)
    assert await index.find(_post(CLAIM)) is None
    assert await index.find(near) is None
    assert index.prune() == 2


async def test_a_check_bound_to_other_evidence_times_is_not_reused(
    index: ReuseIndex, clock: FakeClock
) -> None:
    old = datetime(2019, 3, 1, tzinfo=UTC)
    await _remember(index, clock, _post(CLAIM, created=old))
    # A new post (no time of its own: bounded by now) may not reuse a check bounded to 2019...
    assert await index.find(_post(CLAIM)) is None
    # ...nor a 2024 post, nor an explicit bound far from the check's.
    assert await index.find(_post(CLAIM, created=datetime(2024, 6, 1, tzinfo=UTC))) is None
    assert await index.find(_post(CLAIM), before=datetime(2021, 1, 1, tzinfo=UTC)) is None
    # A post from the same day is answered by it.
    hit = await index.find(_post(CLAIM, created=old + timedelta(hours=5)))
    assert hit is not None and hit.reason == "same text"


async def test_an_unbounded_check_does_not_answer_an_old_post(
    index: ReuseIndex, clock: FakeClock
) -> None:
    await _remember(index, clock, _post(CLAIM))
    reworded = "The WHO has confirmed that 5G towers spread coronavirus in 2020"
    assert await index.find(_post(reworded, created=datetime(2019, 3, 1, tzinfo=UTC))) is None
    assert await index.find(_post(CLAIM), before=datetime(2019, 3, 1, tzinfo=UTC)) is None


async def test_checks_without_claims_or_evidence_are_not_remembered(
    index: ReuseIndex, clock: FakeClock, store: Store
) -> None:
    post = _post(CLAIM)
    assert await index.remember(_check(post, at=clock.now(), claims=False)) is False
    nothing = _check(post, at=clock.now(), evidence=False, label=Label.UNVERIFIABLE)
    assert await index.remember(nothing) is False
    assert store.reuse.count() == 0
    assert await index.find(post) is None
    # A verdict that rests on evidence is reusable, even when it is "unverifiable".
    assert await index.remember(_check(post, at=clock.now(), label=Label.UNVERIFIABLE))


async def test_remembering_a_check_twice_records_it_once(
    index: ReuseIndex, clock: FakeClock, store: Store
) -> None:
    check = _check(_post(CLAIM), at=clock.now())
    assert await index.remember(check) is True
    assert await index.remember(check) is False
    assert store.reuse.count() == 1


@pytest.mark.parametrize(
    "text", ["", "   ", "👍🔥 https://t.co/abc @someone", "\x00\x01", "?!?" * 50_000]
)
async def test_empty_or_corrupt_posts_find_nothing_and_remember_no_text_keys(
    index: ReuseIndex, clock: FakeClock, store: Store, text: str
) -> None:
    await _remember(index, clock, _post(CLAIM))
    assert await index.find(_post(text)) is None
    stored = await _remember(index, clock, _post(text, platform_id="odd"))
    fingerprint = store.reuse.get(stored.id)
    assert fingerprint is not None
    assert (fingerprint.text_hash, fingerprint.claims_hash, fingerprint.embedding) == (
        None,
        None,
        None,
    )
    hit = await index.find(_post("anything", platform_id="odd"))
    assert hit is not None and hit.reason == "same post"


async def test_checks_remembered_elsewhere_are_found_by_a_running_index(
    index: ReuseIndex,
    clock: FakeClock,
    store: Store,
    embedder: OnnxEmbedder,
) -> None:
    await _remember(index, clock, _post(CLAIM))
    assert await index.find(_post("FDA Expands Use of Remdesivir for COVID-19")) is None
    other = ReuseIndex(store.reuse, embedder, ReuseSettings(), clock=clock)  # another process
    check = await _remember(other, clock, _post("FDA Expands Use of Remdesivir for COVID-19"))
    hit = await index.find(_post("FDA expands the use of Remdesivir for COVID-19 treatment"))
    assert hit is not None and (hit.check_id, hit.reason) == (check.id, "near duplicate")


async def test_disabled_reuse_finds_and_records_nothing(
    store: Store, embedder: OnnxEmbedder, clock: FakeClock
) -> None:
    off = ReuseIndex(store.reuse, embedder, ReuseSettings(enabled=False), clock=clock)
    assert await off.remember(_check(_post(CLAIM), at=clock.now())) is False
    assert await off.find(_post(CLAIM)) is None
    assert store.reuse.count() == 0


def test_settings_reject_out_of_range_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTBOT_REUSE__TTL_HOURS", "6")
    monkeypatch.setenv("FACTBOT_REUSE__NEAR_DUPLICATE_THRESHOLD", "0.99")
    assert (Settings().reuse.ttl_hours, Settings().reuse.near_duplicate_threshold) == (6.0, 0.99)
    with pytest.raises(ValueError, match="near_duplicate_threshold"):
        ReuseSettings(near_duplicate_threshold=1.5)
    with pytest.raises(ValueError, match="ttl_hours"):
        ReuseSettings(ttl_hours=0)


async def test_the_latency_bench_times_every_kind_of_look_up(
    shared_data: Path, embedder: OnnxEmbedder
) -> None:
    figures = await bench_reuse.run(
        [30], data=shared_data, queries=3, texts_limit=40, embedder=embedder
    )
    (size,) = figures["sizes"]
    assert size["stored"] == size["loaded"] == 30
    assert size["exact"]["answers"] == {"same text": 3}
    assert size["miss"]["answers"].get("none", 0) >= 1
    assert size["parts"]["embed_p50_ms"] > 0
