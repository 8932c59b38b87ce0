"""``incoherent train-shuffle`` (the supervised Shuffle Test) and ``score-shuffle --scorer classifier``: the
classifier beats chance on its own training distribution, and its results are labelled "supervised (not
zero-shot)" in the printed table, ``results.json`` and the figure's title."""

from __future__ import annotations

import json
import os

import pytest

from incoherent.pipelines import cli
from tests.conftest import run_cli
from tests.shuffle_fixtures import one_thread, wsj_docs_dir, wsj_shuffle_dir  # noqa: F401
from tests.tiny_lm import build_gpt2, build_gpt2_tokenizer
from tests.tiny_model import tiny_base_dir  # noqa: F401

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def classifier(tmp_path_factory, wsj_shuffle_dir):  # noqa: F811
    """A two-layer, width-64 GPT-2 (128 positions) trained as a shuffle classifier for 8 epochs."""
    base = str(tmp_path_factory.mktemp("base"))
    build_gpt2(base, build_gpt2_tokenizer(), n_positions=128, n_embd=64, n_layer=2, n_head=4)
    out = str(tmp_path_factory.mktemp("cls") / "model-f")
    argv = ["train-shuffle", wsj_shuffle_dir, "--base-model", base, "--out", out, "--epochs", "8"]
    assert cli.main([*argv, "--learning-rate", "1e-3", "--device", "cpu"]) == 0
    return out


def test_provenance_and_history(classifier):
    with open(os.path.join(classifier, "provenance.json"), encoding="utf-8") as f:
        provenance = json.load(f)
    assert provenance["saw_shuffled_text"] is True
    assert provenance["block_sizes"] == [1]
    assert provenance["validation_source"] == "validation split"
    assert [r["epoch"] for r in provenance["history"]] == list(range(9))
    assert provenance["config"]["batch_size"] == 16
    losses = [r["train_loss"] for r in provenance["history"][1:]]
    assert min(losses) < 0.6 * losses[0]
    with open(os.path.join(classifier, "config.json"), encoding="utf-8") as f:
        assert json.load(f)["id2label"] == {"0": "incoherent", "1": "coherent"}


def test_beats_chance_on_its_training_distribution_and_is_labelled(
    classifier,
    wsj_shuffle_dir,  # noqa: F811
    tmp_path,
    capsys,
):
    out = tmp_path / "scores"
    code = run_cli(
        "score-shuffle", classifier, wsj_shuffle_dir, "--out", out, "--split", "train",
        "--scorer", "classifier", "--device", "cpu",
    )  # fmt: skip
    assert code == 0
    printed = capsys.readouterr().out
    assert "SUPERVISED (NOT ZERO-SHOT)" in printed
    results = json.loads((out / "results.json").read_text())
    assert results["zero_shot"] is False and results["label"] == "supervised (not zero-shot)"
    assert results["provenance"]["command"] == "train-shuffle"
    assert results["results"]["wsj"]["1"]["accuracy"] > 0.7
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["label"] == "supervised (not zero-shot)"


def test_label_follows_provenance_whatever_the_scorer(tmp_path, wsj_shuffle_dir, capsys):  # noqa: F811
    """An LM whose provenance shows shuffled training text is labelled too (scored as a causal LM)."""
    from tests.tiny_lm import build_gpt2 as build

    model = str(tmp_path / "lm")
    build(model, build_gpt2_tokenizer())
    with open(os.path.join(model, "provenance.json"), "w", encoding="utf-8") as f:
        json.dump({"command": "elsewhere", "saw_shuffled_text": True}, f)
    out = tmp_path / "scores"
    assert run_cli("score-shuffle", model, wsj_shuffle_dir, "--out", out, "--device", "cpu") == 0
    assert "SUPERVISED (NOT ZERO-SHOT)" in capsys.readouterr().out
    assert json.loads((out / "results.json").read_text())["zero_shot"] is False


def test_refusals(tmp_path, wsj_docs_dir, wsj_shuffle_dir, capsys):  # noqa: F811
    out, base = str(tmp_path / "m"), tmp_path / "base"  # apart: an --out inside an input is refused
    base.mkdir()
    assert cli.main(["train-shuffle", wsj_docs_dir, "--base-model", str(base), "--out", out]) == 2
    assert "no shuffle-*/ tables" in capsys.readouterr().err
    assert (
        cli.main(["train-shuffle", wsj_shuffle_dir, "--base-model", str(tmp_path / "x"), "--out", out]) == 2
    )
    assert "no such model directory" in capsys.readouterr().err
    assert cli.main(["train-shuffle", wsj_shuffle_dir, "--base-model", out, "--out", out, "--k", "0"]) == 2
    assert "--k" in capsys.readouterr().err


def test_classifier_scorer_refusals(classifier, wsj_shuffle_dir, tmp_path, capsys):  # noqa: F811
    out = str(tmp_path / "s")
    args = ["score-shuffle", classifier, wsj_shuffle_dir, "--out", out, "--scorer", "classifier"]
    assert run_cli(*args, "--window", "laban") == 2
    assert "--window" in capsys.readouterr().err
    lm = str(tmp_path / "lm")
    build_gpt2(lm, build_gpt2_tokenizer())
    capsys.readouterr()
    assert run_cli("score-shuffle", lm, wsj_shuffle_dir, "--out", out, "--scorer", "classifier") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no sequence-classification head" in err


@pytest.mark.e2e
def test_an_xlnet_base_model_trains_and_scores(tmp_path, wsj_shuffle_dir, tiny_base_dir, capsys):  # noqa: F811
    """XLNet has relative positions and no length limit (``max_position_embeddings: -1``): it failed with an
    OverflowError (``max_length``); any sequence classifier train-filter accepts trains here too."""
    out = tmp_path / "xlnet-f"
    argv = ["train-shuffle", wsj_shuffle_dir, "--base-model", tiny_base_dir, "--out", out, "--epochs", "1"]
    assert (
        cli.main([str(a) for a in argv] + ["--max-steps", "2", "--max-length", "64", "--device", "cpu"]) == 0
    )
    provenance = json.loads((out / "provenance.json").read_text())
    assert provenance["max_length"] == 64 and provenance["saw_shuffled_text"] is True
    scores = tmp_path / "scores"
    code = run_cli(
        "score-shuffle", out, wsj_shuffle_dir, "--out", scores, "--scorer", "classifier", "--device", "cpu",
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    assert json.loads((scores / "results.json").read_text())["label"] == "supervised (not zero-shot)"
