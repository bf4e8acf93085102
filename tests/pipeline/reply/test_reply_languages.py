"""Corrections written in the post's language: each catalogue's rendering, the English notice,
plural forms per locale, right-to-left isolation, and every platform's budget in every language."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from pipeline.records.domain import (
    Basis,
    Claim,
    ClaimReview,
    ClaimVerdict,
    Correction,
    CorrectionItem,
    Document,
    Evidence,
    Label,
    Passage,
    Quote,
    Stance,
    Tier,
    Verdict,
    document_id_for,
)
from pipeline.reply.render import omission_line, render_json, render_markdown, render_plain
from pipeline.reply.thread import graphemes, render_thread, url_weighted, x_weighted
from pipeline.reply.writer import OPENING, write_correction
from pipeline.util.i18n import (
    DEFAULT_LANGUAGES,
    LRI,
    PDI,
    Catalogues,
    isolate_ltr,
    translator,
)

CATALOGUES = Catalogues()
# One claim per language, each naming a Latin-script organisation (for the isolates).
CLAIMS = {
    "en": "The WHO says 5G towers spread the coronavirus in 2020.",
    "es": "La OMS dice que las antenas 5G propagan el coronavirus desde 2020.",
    "pt": "A OMS diz que as antenas 5G espalham o coronavírus desde 2020.",
    "fr": "L'OMS affirme que les antennes 5G propagent le coronavirus depuis 2020.",
    "de": "Die WHO sagt, dass 5G-Masten das Coronavirus seit 2020 verbreiten.",
    "ar": "تقول منظمة WHO إن أبراج 5G تنشر فيروس كورونا منذ عام 2020.",
    "hi": "WHO का कहना है कि 5G टावर 2020 से कोरोना वायरस फैला रहे हैं।",
    "zh": "世卫组织WHO称5G基站自2020年起传播新冠病毒。",
    "ru": "Организация WHO заявляет, что вышки 5G распространяют коронавирус с 2020 года.",
    "ja": "WHOは、5Gの基地局が2020年から新型コロナウイルスを広げていると述べている。",
    "ko": "WHO는 5G 기지국이 2020년부터 코로나바이러스를 퍼뜨린다고 말한다.",
    "it": "L'OMS dice che le antenne 5G diffondono il coronavirus dal 2020.",
    "nl": "De WHO zegt dat 5G-masten sinds 2020 het coronavirus verspreiden.",
    "pl": "WHO twierdzi, że maszty 5G roznoszą koronawirusa od 2020 roku.",
    "tr": "DSÖ (WHO), 5G baz istasyonlarının 2020'den beri koronavirüsü yaydığını söylüyor.",
    "uk": "ВООЗ (WHO) заявляє, що вежі 5G поширюють коронавірус з 2020 року.",
    "id": "WHO menyatakan menara 5G menyebarkan virus corona sejak 2020.",
    "vi": "WHO cho biết các trạm phát sóng 5G lây lan virus corona từ năm 2020.",
    "fa": "سازمان WHO می‌گوید دکل‌های 5G از سال 2020 ویروس کرونا را پخش می‌کنند.",
    "bn": "WHO বলছে, 2020 সাল থেকে 5G টাওয়ার করোনাভাইরাস ছড়াচ্ছে।",
}


def _evidence(n: int, claim_id: str) -> Evidence:
    url = f"https://news{n}.example/articles/{n}?lang=x"
    doc = Document(
        id=document_id_for(url),
        url=url,
        domain=f"news{n}.example",
        title=f"Report {n} on towers",
        text="Radio waves cannot carry a virus.",
    )
    return Evidence(
        id=f"e{n}",
        claim_id=claim_id,
        passage=Passage(id=f"p{n}", document_id=doc.id, position=0, text=doc.text),
        document=doc,
        relevance=0.9,
        tier=Tier.HIGH,
        stance=Stance.REFUTES,
    )


async def _correction(language: str, claims: int = 2) -> Correction:
    """Return a correction of a post in language: one claim false, the others not read."""
    found = [
        Claim(id=f"c{i}", post_id="p", text=CLAIMS[language], position=i) for i in range(claims)
    ]
    evidence = [_evidence(i, f"c{i}") for i in range(claims)]
    verdicts = [
        ClaimVerdict("c0", Label.FALSE, "Reuters rated it false.", ("e0",), basis=Basis.REVIEW),
        *(
            ClaimVerdict(f"c{i}", Label.UNVERIFIABLE, "not read", (f"e{i}",), basis=Basis.LANGUAGE)
            for i in range(1, claims)
        ),
    ]
    quotes = [Quote("e0", "Radio waves cannot carry a virus.", Stance.REFUTES)]
    verdict = Verdict(Label.FALSE, tuple(verdicts))
    return await write_correction(
        found, verdict, evidence, quotes=quotes, language=CATALOGUES.for_language(language)
    )


@pytest.mark.parametrize("language", DEFAULT_LANGUAGES)
async def test_a_correction_is_written_in_the_posts_language(language: str) -> None:
    correction = await _correction(language)
    t = translator(language)
    assert correction.language == language
    assert correction.headline == t.gettext(OPENING[Label.FALSE])
    text = render_plain(correction, budget=None)
    assert t.verdict("false") in text and t.verdict("unverifiable") in text
    assert t.gettext("Claim {number}", number=2) in text
    for ref in correction.references:  # the references are kept, their URLs whole
        assert f"[{ref.number}] " in text and f" {ref.url}" in text.replace("\n", " ")
    if language != "en":
        assert "This post" not in text and "Claim 1" not in text and "stance model" not in text
    assert render_json(correction)["language"] == language
    assert t.gettext("Claim {number}", number=1) in render_markdown(correction, budget=None)


def test_chinese_variants_and_regional_codes_read_their_base_catalogue() -> None:
    for code in ("zh-Hans", "zh-Hant", "zh_TW"):
        assert CATALOGUES.for_language(code).language == "zh"
    assert CATALOGUES.for_language("pt-BR").language == "pt"


@pytest.mark.parametrize(
    ("language", "notice"),
    [
        ("sw", "(factbot does not reply in Swahili yet, so this reply is in English.)"),
        ("th", "(factbot does not reply in Thai yet, so this reply is in English.)"),
        ("und", "(factbot could not tell which language this post is in, so it replies in "),
        (None, "(factbot could not tell which language this post is in, so it replies in "),
    ],
)
async def test_a_language_without_a_catalogue_gets_english_with_a_notice(
    language: str | None, notice: str
) -> None:
    t = CATALOGUES.for_language(language)
    assert t.language == "en" and t.notice.startswith(notice)
    claim = Claim(id="c0", post_id="p", text="Habari za uongo kuhusu chanjo.", position=0)
    verdict = Verdict(Label.UNVERIFIABLE, (ClaimVerdict("c0", Label.UNVERIFIABLE, "none"),))
    correction = await write_correction([claim], verdict, [], language=t)
    first = render_plain(correction, budget=None).splitlines()[0]
    assert first.startswith("This post is unverifiable") and first.endswith(t.notice)


def test_a_catalogue_not_in_use_answers_in_english_and_an_unknown_one_is_refused() -> None:
    only = Catalogues(["en", "es"])
    assert only.for_language("es").language == "es"
    french = only.for_language("fr")
    assert french.language == "en" and "French" in french.notice
    with pytest.raises(ValueError, match="no reply catalogue for xx, tlh"):
        Catalogues(["en", "xx", "tlh"])


@pytest.mark.parametrize(
    ("language", "counts"),
    [
        ("en", {1: "1 more claim was", 2: "2 more claims were"}),
        ("fr", {1: "1 autre affirmation a", 2: "2 autres affirmations ont"}),
        ("de", {1: "1 weitere Behauptung wurde", 3: "3 weitere Behauptungen wurden"}),
        ("hi", {1: "1 और दावे की", 2: "2 और दावों की"}),
        ("zh", {1: "另有 1 条", 7: "另有 7 条"}),
        ("ja", {1: "ほかに1件の主張", 7: "ほかに7件の主張"}),
        ("it", {1: "un'altra affermazione", 2: "altre 2 affermazioni"}),
        (
            "ru",
            {
                1: "ещё 1 утверждение;",
                3: "ещё 3 утверждения;",
                5: "ещё 5 утверждений;",
                12: "ещё 12 утверждений;",
                21: "ещё 21 утверждение;",
                22: "ещё 22 утверждения;",
            },
        ),
        (
            "pl",
            {
                1: "jeszcze 1 twierdzenie;",
                2: "jeszcze 2 twierdzenia;",
                5: "jeszcze 5 twierdzeń;",
                12: "jeszcze 12 twierdzeń;",
                22: "jeszcze 22 twierdzenia;",
                25: "jeszcze 25 twierdzeń;",
            },
        ),
        ("tr", {1: "1 iddia daha", 4: "4 iddia daha"}),
        (
            "uk",
            {
                1: "Перевірено ще 1 твердження;",
                3: "Перевірено ще 3 твердження;",
                5: "Перевірено ще 5 тверджень;",
                11: "Перевірено ще 11 тверджень;",
                21: "Перевірено ще 21 твердження;",
                22: "Перевірено ще 22 твердження;",
                25: "Перевірено ще 25 тверджень;",
            },
        ),
        ("bn", {1: "আরও 1টি দাবি", 3: "আরও 3টি দাবি"}),
        ("fa", {1: "1 ادعای دیگر", 3: "3 ادعای دیگر"}),
        (
            "ar",
            {
                1: "فُحص ادعاء آخر واحد",
                2: "فُحص ادعاءان آخران",
                3: "فُحصت 3 ادعاءات أخرى",
                11: "فُحص 11 ادعاءً آخر",
                100: "فُحص 100 ادعاء آخر",
            },
        ),
    ],
)
def test_plural_forms_follow_each_locale(language: str, counts: dict[int, str]) -> None:
    for n, wanted in counts.items():
        assert wanted in omission_line(n, language=language).translate({0x2066: None, 0x2069: None})


def test_lists_and_dates_are_written_per_locale() -> None:
    from datetime import date

    assert translator("es").join(["[1]", "[2]", "[3]"]) == "[1], [2] y [3]"
    assert translator("zh").join(["[1]", "[2]"]) == "[1]和[2]"
    assert translator("en").join(["[1]", "[2]"]) == "[1] and [2]"
    assert translator("de").date(date(2026, 12, 5)) == "05.12.2026"
    assert translator("zh").date(date(2026, 12, 5)) == "2026年12月5日"
    assert translator("ru").join(["[1]", "[2]"]) == "[1] и [2]"
    assert translator("ko").join(["[1]", "[2]", "[3]"]) == "[1], [2] 및 [3]"
    assert translator("ja").date(date(2026, 12, 5)) == "2026/12/05"
    assert translator("ru").date(date(2012, 5, 3)) == "3 мая 2012\u202fг."  # narrow no-break
    # Polish medium dates leave the month in the nominative ("3 maj 2012"): the long form.
    assert translator("pl").date(date(2012, 5, 3)) == "3 maja 2012"
    assert translator("pl").date(date(2026, 12, 5)) == "5 grudnia 2026"


@pytest.mark.parametrize("language", ["zh", "ja"])
def test_markers_stand_before_the_full_stop_where_sentences_have_no_space(language: str) -> None:
    t = translator(language)
    explanation = t.gettext("The cited sources contradict it.")
    item = CorrectionItem(1, "x", Label.FALSE, explanation, references=(1, 2), language=language)
    assert item.explained() == f"{explanation[:-1]}[1][2]。"
    spaced = CorrectionItem(1, "x", Label.FALSE, "Las fuentes lo contradicen.", (1,), language="es")
    assert spaced.explained() == "Las fuentes lo contradicen. [1]"


async def test_a_japanese_fact_check_sentence_runs_on_without_spaces() -> None:
    url = "https://www.politifact.com/factchecks/2020/may/03/5g/"
    when = datetime(2020, 5, 3, tzinfo=UTC)
    review = ClaimReview(
        "5G spreads the virus", "Pants on Fire", Label.FALSE, "PolitiFact", url, when
    )
    doc = Document(
        id=document_id_for(url),
        url=url,
        domain="politifact.com",
        title="5G",
        text="No.",
        claim_review=review,
    )
    evidence = Evidence(
        id="fc-1",
        claim_id="c0",
        passage=Passage(id="p0", document_id=doc.id, position=0, text="No."),
        document=doc,
        relevance=0.9,
        tier=Tier.HIGH,
        stance=Stance.REFUTES,
    )
    claim = Claim(id="c0", post_id="p", text=CLAIMS["ja"], position=0)
    cv = ClaimVerdict("c0", Label.FALSE, "rated false", ("fc-1",), basis=Basis.REVIEW)
    correction = await write_correction(
        [claim], Verdict(Label.FALSE, (cv,)), [evidence], language=CATALOGUES.for_language("ja")
    )
    assert correction.items[0].explanation == (
        "PolitiFactによる検証（2020/05/03）：Pants on Fire (誤り)。"
        "このファクトチェックは2020年のものです。その後、状況が変わっている可能性があります。"
    )


@pytest.mark.parametrize("language", ["ar", "fa"])
async def test_right_to_left_replies_isolate_latin_runs_but_not_urls_or_markers(
    language: str,
) -> None:
    correction = await _correction(language)
    text = render_plain(correction, budget=None)
    assert f"{LRI}WHO{PDI}" in text and f"{LRI}5G{PDI}" in text
    assert f"{LRI}Report 0 on towers{PDI}" in text  # a Latin title in the reference list
    for ref in correction.references:
        assert f" {ref.url}" in text and f"{LRI}{ref.url}" not in text
    assert "[1]" in text and f"{LRI}1{PDI}" not in text
    # Other scripts are never isolated.
    for other in ("hi", "bn", "uk"):
        assert LRI not in render_plain(await _correction(other), budget=None)


@pytest.mark.parametrize(
    ("text", "isolated"),
    [
        ("قال Joe Biden اليوم", f"قال {LRI}Joe Biden{PDI} اليوم"),
        ("زار (Paris).", f"زار ({LRI}Paris{PDI})."),
        ("عدد 1,234 شخص", f"عدد {LRI}1,234{PDI} شخص"),
        ("في عام 2024 [2]", "في عام 2024 [2]"),
        ("انظر https://a.example/x?q=1 الآن", "انظر https://a.example/x?q=1 الآن"),
        ("١٢٣ رقم عربي", "١٢٣ رقم عربي"),
        ("عنوان: 5G नहीं फैलाते — خبر", f"عنوان: {LRI}5G नहीं फैलाते{PDI} — خبر"),
        ("منبع «cafe\u0301».", f"منبع «{LRI}cafe\u0301{PDI}»."),
    ],
)
def test_isolate_ltr(text: str, isolated: str) -> None:
    assert isolate_ltr(text) == isolated
    assert isolate_ltr(isolated) == isolated  # idempotent


BUDGETS = [("x", 280, x_weighted), ("bluesky", 300, graphemes), ("mastodon", 500, url_weighted)]


@pytest.mark.parametrize("language", DEFAULT_LANGUAGES)
@pytest.mark.parametrize(("platform", "budget", "measure"), BUDGETS)
async def test_every_language_fits_every_thread_budget(
    language: str, platform: str, budget: int, measure: object
) -> None:
    correction = await _correction(language, claims=5)  # five claims: it must shrink
    extras = [translator(language).gettext("Full report: {url}", url="https://f.example/c/1")]
    posts = render_thread(
        correction,
        budget=budget,
        measure=measure,
        max_posts=4,
        extras=extras,  # type: ignore[arg-type]
    )
    assert 1 <= len(posts) <= 4
    assert all(measure(p) <= budget for p in posts), platform  # type: ignore[operator]
    joined = "\n".join(posts)
    assert correction.headline.split()[0] in joined
