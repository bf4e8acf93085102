"""Which languages a claim is searched in, and the fact-checkers searched for each language.

A claim in another language than English is searched twice: in its own language (the
providers' language parameter, and the fact-checkers that publish in it, restricted with
`site:`), and for English results with the English fact-checkers (no translation model ships
in any package, MODELS.md: names, numbers and dates carry the English search; an operator's
translated query can come later). English claims are searched as before.

The fact-checkers are signatories of the International Fact-Checking Network's code of
principles (the public list at ifcncodeofprinciples.poynter.org, written here from knowledge
on 2026-12-05, not downloaded) and AFP's language desks, one group a language; each is rated
**high** in pipeline/data/seed_sources.csv with the same provenance (a test keeps them in step).
"""

from __future__ import annotations

ENGLISH = "en"

FACT_CHECK_SITES_BY_LANGUAGE: dict[str, tuple[str, ...]] = {
    "es": (
        "maldita.es",
        "newtral.es",
        "verifica.efe.com",
        "chequeado.com",
        "colombiacheck.com",
        "factual.afp.com",
        "ecuadorchequea.com",
    ),
    "pt": (
        "aosfatos.org",
        "lupa.uol.com.br",
        "checamos.afp.com",
        "poligrafo.sapo.pt",
        "projetocomprova.com.br",
    ),
    "fr": ("factuel.afp.com", "lemonde.fr/les-decodeurs", "liberation.fr/checknews"),
    "de": ("correctiv.org", "faktencheck.afp.com", "dpa-factchecking.com", "mimikama.org"),
    "ar": ("misbar.com", "fatabyyano.net", "factcheckarabic.afp.com", "akeed.jo", "matsda2sh.com"),
    "hi": (
        "boomlive.in",
        "altnews.in",
        "vishvasnews.com",
        "newschecker.in",
        "factly.in",
        "factcheckhindi.afp.com",
    ),
    "zh": ("tfc-taiwan.org.tw", "mygopen.com", "cofacts.tw", "annielab.org"),
}


def search_language(claim_language: str | None) -> str | None:
    """Return the ISO 639-1 code to search a claim in, or None (the providers' default).

    zh-Hans and zh-Hant search as zh; `und` and unidentified claims keep the default.
    """
    if not claim_language or claim_language == "und":
        return None
    return claim_language.split("-", 1)[0].lower()
