"""End-to-end CLI tests of `incoherent train-filter` and `incoherent evaluate` on the tiny model."""

import json
import os
import shutil

import torch

from incoherent.pipelines.cli import main
from tests.tiny_model import tiny_base_dir, tiny_data_dir, tiny_trained_dir  # noqa: F401


def test_train_filter_command(tiny_base_dir, tiny_data_dir, tmp_path, capsys):  # noqa: F811
    out = str(tmp_path / "model")
    argv = [
        "train-filter",
        tiny_data_dir,
        "--base-model",
        tiny_base_dir,
        "--out",
        out,
        "--epochs",
        "1",
        "--max-steps",
        "2",
        "--max-length",
        "32",
        "--batch-size",
        "8",
        "--learning-rate",
        "1e-3",
    ]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "epoch 1 kept (validation split)" in printed and "document accuracy" in printed
    with open(os.path.join(out, "metrics.json")) as f:
        assert json.load(f)["config"]["learning_rate"] == 1e-3
    assert main(argv) == 2  # not empty without --overwrite
    assert "error: " in capsys.readouterr().err


def test_evaluate_command(tiny_trained_dir, tiny_data_dir, tmp_path, capsys):  # noqa: F811
    assert (
        main(
            [
                "evaluate",
                tiny_trained_dir,
                tiny_data_dir,
                "--split",
                "validation",
                "--out",
                str(tmp_path / "e.json"),
                "--predictions",
                str(tmp_path / "p.jsonl"),
            ]
        )
        == 0
    )
    predictions = [json.loads(line) for line in (tmp_path / "p.jsonl").read_text().splitlines()]
    assert len(predictions) == 20 and {"id", "intruder_index", "predicted_index"} <= set(predictions[0])
    printed = capsys.readouterr().out
    assert "sentence F1" in printed and "majority" in printed
    with open(tmp_path / "e.json") as f:
        report = json.load(f)
    assert report["split"] == "validation" and report["documents"] == 20 and report["max_length"] == 64
    with open(os.path.join(tiny_trained_dir, "metrics.json")) as f:
        # the same data, model and code path as the validation during training
        assert report["sentence"] == json.load(f)["validation"]["sentence"]
    assert 0.0 <= report["document_accuracy"] <= 1.0 and report["majority"]["document_accuracy"] == 0.5


def test_evaluate_default_output_and_missing_split(tiny_trained_dir, tiny_data_dir, tmp_path, capsys):  # noqa: F811
    model = str(tmp_path / "m")
    shutil.copytree(tiny_trained_dir, model)
    assert main(["evaluate", model, tiny_data_dir]) == 0
    assert os.path.exists(os.path.join(model, "eval-test.json"))
    assert main(["evaluate", model, tiny_data_dir, "--split", "dev"]) == 2
    assert "no 'dev' split" in capsys.readouterr().err


def test_bad_model_dirs_are_one_line_errors(tiny_trained_dir, tiny_data_dir, tmp_path, capsys):  # noqa: F811
    pickled = str(tmp_path / "pickled")
    shutil.copytree(tiny_trained_dir, pickled)
    os.remove(os.path.join(pickled, "model.safetensors"))
    torch.save({}, os.path.join(pickled, "pytorch_model.bin"))
    assert main(["evaluate", pickled, tiny_data_dir]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {pickled}: only pickled weights") and "\n" not in err


def test_evaluate_on_cuda(tiny_trained_dir, tiny_data_dir, tmp_path, capsys):  # noqa: F811
    """``--device cuda`` scores on the GPU where torch sees one, and is a one-line error where it does not."""
    args = ["evaluate", tiny_trained_dir, tiny_data_dir, "--split", "validation", "--dtype", "float32"]
    gpu = str(tmp_path / "gpu.json")
    if not torch.cuda.is_available():
        assert main([*args, "--device", "cuda", "--out", gpu]) == 2
        err = capsys.readouterr().err.strip()
        assert (
            err == "error: --device cuda: CUDA was requested but no GPU is visible to torch (use auto or cpu)"
        )
        assert not os.path.exists(gpu)
        return
    cpu = str(tmp_path / "cpu.json")
    assert main([*args, "--device", "cuda", "--out", gpu]) == 0
    assert main([*args, "--device", "cpu", "--out", cpu]) == 0
    with open(gpu) as f:
        on_gpu = json.load(f)
    with open(cpu) as f:
        on_cpu = json.load(f)
    assert on_gpu["device"] == "cuda" and on_cpu["device"] == "cpu"
    assert on_gpu["documents"] == on_cpu["documents"] == 20
    # the same fp32 model on another device: the same document-level answers, up to a borderline document
    assert abs(on_gpu["document_accuracy"] - on_cpu["document_accuracy"]) <= 1 / 20
