"""``incoherent evaluate`` with several models on a dataset of several sources: INSteD's Table 3 (every train
-> test pair's document accuracy and sentence F1, the majority baseline beside them), printed and in JSON."""

from __future__ import annotations

import json
import os

import pytest

from incoherent.pipelines.cli import main
from tests.shuffle_fixtures import one_thread  # noqa: F401
from tests.tiny_model import _cached, intruder_rows, sample_documents, tiny_base_dir, write_intruder_build  # noqa: F401

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def two_sources(tmp_path_factory) -> str:
    """An intruder build with two sources (``wiki``, ``cnn``: halves of the WSJ sample), train and test."""

    def make(path):
        rows = intruder_rows(sample_documents())
        for source, part in (("wiki", rows[:50]), ("cnn", rows[50:100])):
            part = [dict(r, source=source, id=f"{source}-{r['id']}") for r in part]
            write_intruder_build(path, {"train": part[:34], "test": part[34:]}, source=source)

    return _cached("two-sources", make, tmp_path_factory)


@pytest.fixture(scope="module")
def trained(tmp_path_factory, tiny_base_dir, two_sources):  # noqa: F811
    """One tiny classifier per source, trained on that source's train split only."""
    import shutil

    from incoherent.filters.train import TrainConfig, train

    out = {}
    for source in ("wiki", "cnn"):
        data = str(tmp_path_factory.mktemp(f"data-{source}"))
        shutil.copytree(
            os.path.join(two_sources, f"intruder-{source}"), os.path.join(data, f"intruder-{source}")
        )
        model = str(tmp_path_factory.mktemp(f"model-{source}"))
        train(TrainConfig(data_dir=data, base_model=tiny_base_dir, out=model, epochs=1, learning_rate=3e-3,
                          batch_size=16, max_length=64, device="cpu", overwrite=True))  # fmt: skip
        out[source] = model
    return out


def test_train_test_matrix(trained, two_sources, tmp_path, capsys):
    out = tmp_path / "table3.json"
    args = [
        "evaluate",
        trained["wiki"],
        f"CNN={trained['cnn']}",
        two_sources,
        "--out",
        str(out),
        "--device",
        "cpu",
    ]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "INSteD Table 3 layout" in printed
    for pair in ("wiki -> cnn", "wiki -> wiki", "CNN -> cnn", "CNN -> wiki"):
        assert pair in printed
    report = json.loads(out.read_text())
    matrix = report["matrix"]
    assert [(m["train"], m["test"]) for m in matrix] == [
        ("wiki", "cnn"), ("wiki", "wiki"), ("CNN", "cnn"), ("CNN", "wiki")
    ]  # fmt: skip
    keys = {
        "documents",
        "document_accuracy",
        "sentence_f1",
        "majority_document_accuracy",
        "majority_sentence_f1",
    }
    assert all(keys <= set(m) for m in matrix)
    assert all(0 <= m["document_accuracy"] <= 1 and m["documents"] == 16 for m in matrix)
    assert set(report["models"]) == {"wiki", "CNN"}


def test_one_model_keeps_its_report_and_adds_the_matrix(trained, two_sources, tmp_path, capsys):
    out = tmp_path / "one.json"
    assert main(["evaluate", trained["wiki"], two_sources, "--out", str(out), "--device", "cpu"]) == 0
    report = json.loads(out.read_text())
    assert list(report)[:3] == ["model_dir", "data_dir", "split"]
    assert "document_accuracy" in report and [m["test"] for m in report["matrix"]] == ["cnn", "wiki"]


def test_several_models_need_out(trained, two_sources, capsys):
    assert main(["evaluate", trained["wiki"], f"x={trained['cnn']}", two_sources]) == 2
    assert "--out" in capsys.readouterr().err
    assert main(["evaluate", trained["wiki"], f"wiki={trained['cnn']}", two_sources, "--out", "x.json"]) == 2
    assert "named" in capsys.readouterr().err
