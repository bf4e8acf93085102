"""The platform runtime answers in the post's language: refusals, rate limits and failures
(the real guards, store, worker pool and lingua; a recording sender stands for the platform)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bots.app.root import App
from bots.runtime.platform.intake import PlatformService
from bots.settings import GuardSettings
from pipeline.inputs.language import LanguageIdentifier
from pipeline.util.i18n import LRI, isolate_ltr
from storage import Store
from tests.bots.runtime.test_platform_runtime import Sender, _drain, _request, _settings

SPANISH = "El gobierno anunció que las vacunas contra el covid causan autismo en los niños."
ARABIC = "أعلنت وزارة الصحة أن لقاحات كورونا تسبب العقم لدى النساء في مصر."
RUSSIAN = "Минздрав заявил, что вакцина от гриппа вызывает бесплодие у женщин."
GREEK = (
    "Το υπουργείο Υγείας ανακοίνωσε ότι το εμβόλιο της γρίπης προκαλεί στειρότητα στις γυναίκες."
)


@pytest.fixture(scope="module")
def languages() -> LanguageIdentifier:
    return LanguageIdentifier()


def test_a_refusal_to_a_spanish_post_is_in_spanish(
    tmp_path: Path, languages: LanguageIdentifier
) -> None:
    settings = _settings(tmp_path, guards=GuardSettings(deny_channels=["chat:C666"]))
    with Store.open(tmp_path / "f.db") as store:
        service = PlatformService(store, settings, languages=languages)
        denied = asyncio.run(service.intake(_request("e1", text=SPANISH, channel="C666")))
        assert denied.status == "refused" and denied.answer is not None
        assert denied.answer.message == "factbot no está activado en este canal."
        accepted = asyncio.run(service.intake(_request("e2", text=SPANISH)))
        assert accepted.answer is not None
        assert accepted.answer.message.startswith("Verificando este mensaje")
        job = store.jobs.get(str(accepted.job_id))
        assert job.payload["language"] == "es"  # a failure posted later is in Spanish too


def test_an_arabic_rate_limit_is_arabic_and_right_to_left(
    tmp_path: Path, languages: LanguageIdentifier
) -> None:
    settings = _settings(tmp_path, guards=GuardSettings(user_burst=1, user_per_hour=6))
    with Store.open(tmp_path / "f.db") as store:
        service = PlatformService(store, settings, languages=languages)
        results = [asyncio.run(service.intake(_request(f"e{n}", text=ARABIC))) for n in range(2)]
        assert [r.status for r in results] == ["accepted", "refused"]
        message = results[1].answer.message  # type: ignore[union-attr]
        assert message == (
            "لقد طلبت عدة فحوص في وقت قصير. يرجى المحاولة مرة أخرى بعد 10 دقائق تقريبًا."
        )
        assert isolate_ltr(message) == message


def test_a_language_without_a_catalogue_is_refused_in_english_with_the_notice(
    tmp_path: Path, languages: LanguageIdentifier
) -> None:
    settings = _settings(tmp_path, guards=GuardSettings(max_post_chars=100))
    with Store.open(tmp_path / "f.db") as store:
        service = PlatformService(store, settings, languages=languages)
        long = asyncio.run(service.intake(_request("e1", text=f"{GREEK} {GREEK}")))
        assert long.answer is not None
        assert long.answer.message == (
            "This message is too long to check (183 characters; the limit is 100). Quote the part "
            "you want checked. (factbot does not reply in Greek yet, so this reply is in "
            "English.)"
        )
        # Russian has its catalogue: the same refusal is in Russian, with no notice.
        russian = asyncio.run(service.intake(_request("e3", text=f"{RUSSIAN} {RUSSIAN}")))
        assert russian.answer is not None and russian.answer.message == (
            "Это сообщение слишком длинное для проверки (135 симв.; лимит — 100). "
            "Процитируйте часть, которую нужно проверить."
        )
        # Arabic is right to left: the too-long refusal isolates nothing but Latin runs.
        arabic = asyncio.run(service.intake(_request("e2", text=f"{ARABIC} {ARABIC}")))
        assert arabic.answer is not None and "هذه الرسالة أطول من أن تُفحص" in arabic.answer.message
        assert LRI not in arabic.answer.message


@pytest.fixture
def app(tmp_path: Path, embedder: Any) -> Iterator[App]:
    opened = App(_settings(tmp_path / "d"), embedder=embedder)
    yield opened
    opened.close()


def test_a_post_that_cannot_be_checked_fails_in_its_own_language(
    app: App, languages: LanguageIdentifier
) -> None:
    service = PlatformService(app.store, app.settings, languages=languages)
    greeting = _request("e1", text="¡Hola a todos! Buenos días y feliz domingo.")
    assert asyncio.run(service.intake(greeting)).status == "accepted"
    sender = Sender()
    _drain(app, sender)
    assert len(sender.sent) == 1
    _, answer = sender.sent[0]
    assert answer.kind == "failure" and answer.private
    assert answer.message.startswith(
        "factbot no pudo verificar este mensaje: no afirma nada que se pueda verificar"
    ), [j.last_error for j in app.store.jobs.list()]


def test_an_answer_to_the_requester_is_in_their_language_or_plain_english(tmp_path: Path) -> None:
    with Store.open(tmp_path / "f.db") as store:
        service = PlatformService(store, _settings(tmp_path))
        failed = RuntimeError("the database went away")
        spanish = service.answer_for_error(failed, language="es", requester=True)
        assert spanish.message == (
            "Lo sentimos, factbot no pudo terminar esta verificación. Inténtalo de nuevo más tarde."
        )
        # Greek has no catalogue: the asker's own language gets plain English, ...
        assert service.answer_for_error(failed, language="el", requester=True).message == (
            "Sorry, factbot could not finish this check. Please try again later."
        )
        # ... while a post in it gets English with the notice.
        assert (
            "does not reply in Greek yet" in service.answer_for_error(failed, language="el").message
        )
        japanese = service.answer_for_error(failed, language="ja", requester=True)
        assert japanese.message == (
            "申し訳ありません。factbotはこの検証を完了できませんでした。"
            "しばらくしてからもう一度お試しください。"
        )
        optout = asyncio.run(service.set_opt_out("discord", "user", "42", True, language="zh-Hans"))
        assert optout.message == "已完成：factbot 将不再核查你的消息，也不再接受你的请求。"
