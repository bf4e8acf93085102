"""One post in each reply language, and the check that a platform's reply to it is in it.

The posts say the claim of the small corpus (`platform_app.CLAIM`, which a rated fact-check
refutes) in each language factbot replies in; `LANGUAGE_CORPUS` holds a fact-check page about
it in each of those languages. The end-to-end tests of every platform post them and read the
replies back from the stand-in servers."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pipeline.evidence.ingest import Ingester
from pipeline.records.domain import Check, Label
from pipeline.reply.writer import OPENING
from pipeline.util.i18n import DEFAULT_LANGUAGES, translator
from tests.conftest import FIXTURES
from tests.support.platform_app import CLAIM

# One fact-check page in each language besides English, refuting the claim in its own words.
LANGUAGE_CORPUS = FIXTURES / "corpus_languages.jsonl"

POSTS = {
    "en": CLAIM,
    "es": "Las redes 5G propagan el coronavirus, y nadie lo cuenta.",
    "pt": "As redes 5G espalham o coronavírus, e ninguém fala disso.",
    "fr": "Les réseaux 5G propagent le coronavirus, et personne n'en parle.",
    "de": "Die 5G-Netze verbreiten das Coronavirus, und niemand spricht darüber.",
    "ar": "أكدت التقارير أن شبكات الجيل الخامس تنشر فيروس كورونا.",
    "hi": "5G नेटवर्क कोरोना वायरस फैलाते हैं और कोई इसके बारे में बात नहीं करता।",
    "zh": "5G网络正在传播新冠病毒，却没有人谈论这件事。",
    "ru": "Сети 5G распространяют коронавирус, и никто об этом не говорит.",
    "ja": "5Gのネットワークが新型コロナウイルスを広げているのに、誰もそのことを話さない。",
    "ko": "5G 네트워크가 코로나바이러스를 퍼뜨리는데 아무도 이 얘기를 하지 않는다.",
    "it": "Le reti 5G diffondono il coronavirus, e nessuno ne parla.",
    "nl": "De 5G-netwerken verspreiden het coronavirus, en niemand praat erover.",
    "pl": "Sieci 5G roznoszą koronawirusa, a nikt o tym nie mówi.",
    "tr": "5G ağları koronavirüsü yayıyor ve kimse bundan bahsetmiyor.",
    "uk": "Мережі 5G поширюють коронавірус, і ніхто про це не говорить.",
    "id": "Jaringan 5G menyebarkan virus corona, dan tidak ada yang membicarakannya.",
    "vi": "Mạng 5G đang lây lan virus corona mà không ai nói về điều này.",
    "fa": "شبکه‌های 5G ویروس کرونا را پخش می‌کنند و هیچ‌کس درباره‌اش حرف نمی‌زند.",
    "bn": "5G নেটওয়ার্ক করোনাভাইরাস ছড়াচ্ছে, অথচ কেউ এ নিয়ে কথা বলছে না।",
}
assert tuple(POSTS) == DEFAULT_LANGUAGES


async def ingest_languages(app: Any) -> None:
    """Ingest the small corpus and the pages in each language into app's evidence index."""
    await Ingester(app.store.documents, app.embedder).ingest(
        [str(FIXTURES / "corpus.jsonl"), str(LANGUAGE_CORPUS)]
    )


def language_of(check: Check) -> str:
    """Return the language whose post a check checked."""
    [language] = [code for code, text in POSTS.items() if text in check.post.text]
    return language


def assert_reply_in(language: str, check: Check, texts: Iterable[str]) -> None:
    """Assert that a reply is in the language, with a verdict and references to the check's
    sources, and that the post was checked (not refused)."""
    text = "\n".join(texts)
    t = translator(language)
    assert check.correction.language == language
    assert check.verdict.claims, f"{language}: nothing was checked"
    headline = t.gettext(OPENING[check.verdict.label])
    assert headline.split()[0] in text, f"{language}: {text[:200]!r}"
    verdicts = {t.verdict(cv.label.value) for cv in check.verdict.claims if cv.shown}
    assert any(v in text or v.capitalize() in text for v in verdicts), language
    assert check.correction.references, f"{language}: no references"
    assert any(r.url in text for r in check.correction.references), language
    if language != "en":
        assert OPENING[Label.FALSE] not in text and OPENING[Label.UNVERIFIABLE] not in text
        assert "Claim 1" not in text
