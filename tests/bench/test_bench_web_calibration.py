"""The web calibration set's distractors: passages that do not bear on the claim (issue 51).

Its first read took FEVER-Symmetric's counterpart evidence, written to flip a claim's label, as
the nearest "distractors" of that claim: passages that do bear on it.
"""

from __future__ import annotations

from bench.web_calibration import distractor

CLAIM = "Colombiana is a French film."
OWN = "Colombiana is a 2011 French action film co-written and produced by Luc Besson."


def test_a_passage_about_the_claim_is_never_its_distractor() -> None:
    # the counterpart evidence of the same page, written to flip the label
    assert not distractor(CLAIM, OWN, "Colombiana is a 2011 American action film.")
    # the claim's words without its name
    assert not distractor(CLAIM, OWN, "The film is a French production shot in Paris.")
    # the claim's name elsewhere in the sentence
    assert not distractor(
        "The film was directed by Olivier Megaton.", OWN, "Olivier Megaton was born in 1965."
    )


def test_a_passage_on_another_subject_is_a_distractor() -> None:
    assert distractor(CLAIM, OWN, "Amélie is a 2001 romantic comedy set in Montmartre.")
