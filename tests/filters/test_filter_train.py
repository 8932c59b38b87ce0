import json
import math
import os

import pytest
from safetensors.torch import load_file

from incoherent.filters.train import TrainConfig, linear_schedule, train, training_examples
from incoherent.schemas.records import InputError
from tests.tiny_model import (  # noqa: F401
    intruder_rows,
    sample_documents,
    tiny_base_dir,
    tiny_data_dir,
    tiny_trained_dir,
    write_intruder_build,
)


def test_training_examples_follow_the_task_format():
    rows = [
        {"sentences": ["a", "b", "c"], "intruder_index": 2},
        {"sentences": ["d", "e"], "intruder_index": -1},
    ]
    assert [(p, label) for _, p, label in training_examples(rows)] == [(1, 0), (2, 1), (1, 0)]


def test_linear_schedule():
    assert linear_schedule(0, 100, 10) == pytest.approx(0.1)
    assert linear_schedule(9, 100, 10) == 1.0
    assert linear_schedule(55, 100, 10) == pytest.approx(0.5)
    assert linear_schedule(100, 100, 10) == 0.0


def test_fine_tuned_model_is_saved_with_metrics(tiny_trained_dir, tiny_base_dir):  # noqa: F811
    names = set(os.listdir(tiny_trained_dir))
    assert {"model.safetensors", "config.json", "tokenizer.json", "metrics.json"} <= names
    assert not any(n.endswith(".bin") for n in names)
    with open(os.path.join(tiny_trained_dir, "metrics.json")) as f:
        metrics = json.load(f)
    assert metrics["validation_source"] == "validation split"
    assert metrics["train_documents"] == 40 and metrics["validation_documents"] == 20
    assert [h["epoch"] for h in metrics["history"]] == [1, 2]
    assert metrics["chosen_epoch"] in (1, 2)
    assert metrics["validation"] == metrics["history"][metrics["chosen_epoch"] - 1]["validation"]
    # it learned at least the class prior: below the loss of a coin flip
    assert metrics["history"][-1]["train_loss"] < math.log(2)
    before, after = (
        load_file(os.path.join(tiny_base_dir, "model.safetensors")),
        load_file(os.path.join(tiny_trained_dir, "model.safetensors")),
    )
    assert set(before) == set(after)
    assert any(not before[k].equal(after[k]) for k in before)


def test_without_validation_split_a_slice_of_train_is_carved(tiny_base_dir, tmp_path):  # noqa: F811
    data_dir = write_intruder_build(str(tmp_path / "data"), {"train": intruder_rows(sample_documents()[:20])})
    summary = train(
        TrainConfig(
            data_dir=data_dir,
            base_model=tiny_base_dir,
            out=str(tmp_path / "m"),
            epochs=1,
            batch_size=8,
            max_length=32,
            max_steps=2,
            device="cpu",
        )
    )
    assert summary["validation_source"].startswith("no validation split")
    assert summary["validation_documents"] == 2 and summary["train_documents"] == 18
    assert summary["history"][0]["steps"] == 2
    with pytest.raises(InputError, match="not empty"):
        train(TrainConfig(data_dir=data_dir, base_model=tiny_base_dir, out=str(tmp_path / "m"), device="cpu"))


def test_bad_base_model(tmp_path, tiny_data_dir):  # noqa: F811
    with pytest.raises(InputError, match="--base-model .*: no such model directory"):
        train(
            TrainConfig(
                data_dir=tiny_data_dir, base_model=str(tmp_path / "none" / "x"), out=str(tmp_path / "o")
            )
        )
    assert not (tmp_path / "o").exists()  # nothing written before the model loads


def test_a_base_model_with_another_head_gets_a_two_label_one(tmp_path, tiny_base_dir):  # noqa: F811
    from transformers import AutoTokenizer

    from incoherent.filters.model import load_classifier
    from tests.tiny_model import build_model

    base = build_model(str(tmp_path / "three"), AutoTokenizer.from_pretrained(tiny_base_dir), num_labels=3)
    data_dir = write_intruder_build(str(tmp_path / "data"), {"train": intruder_rows(sample_documents()[:12])})
    out = str(tmp_path / "m")
    train(
        TrainConfig(
            data_dir=data_dir, base_model=base, out=out, epochs=1, max_length=32, max_steps=1, device="cpu"
        )
    )
    model, _ = load_classifier(out)
    assert model.config.num_labels == 2 and model.config.id2label == {0: "original", 1: "intruder"}
