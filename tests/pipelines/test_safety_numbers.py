"""Hyper-parameters and numeric flags out of range or not finite: one line naming the flag, exit 2, before any
data or model is read (issue #31). The model and data paths given do not exist: a check that came after
loading would complain about them instead."""

from __future__ import annotations

import json
import math

import pytest

from incoherent.filters.provenance import write_provenance
from incoherent.pipelines import cli

COMMANDS = {
    "finetune-lm": ["finetune-lm", "DATA", "--base-model", "MISSING-MODEL"],
    "train-shuffle": ["train-shuffle", "DATA", "--base-model", "MISSING-MODEL"],
    "train-filter": ["train-filter", "DATA", "--base-model", "MISSING-MODEL"],
}
CASES = [
    ("finetune-lm", "--learning-rate", "nan", "must be a finite number in (0, 1], got nan"),
    ("finetune-lm", "--learning-rate", "inf", "must be a finite number in (0, 1], got inf"),
    ("finetune-lm", "--learning-rate", "0", "must be a finite number in (0, 1], got 0.0"),
    ("finetune-lm", "--learning-rate", "-1e-5", "got -1e-05"),
    ("finetune-lm", "--batch-size", "0", "must be between 1 and 1048576, got 0"),
    ("finetune-lm", "--epochs", "0", "must be between 1 and 10000, got 0"),
    ("finetune-lm", "--max-length", "1", "must be between 4 and 16777216, got 1"),
    ("finetune-lm", "--max-steps", "0", "must be at least 1, got 0"),
    ("finetune-lm", "--heldout-fraction", "1", "must be a fraction in (0, 1), got 1.0"),
    ("finetune-lm", "--heldout-fraction", "nan", "must be a fraction in (0, 1), got nan"),
    ("train-shuffle", "--learning-rate", "nan", "got nan"),
    ("train-shuffle", "--learning-rate", "inf", "got inf"),
    ("train-shuffle", "--batch-size", "0", "got 0"),
    ("train-shuffle", "--epochs", "99999999999", "got 99999999999"),
    ("train-filter", "--learning-rate", "nan", "got nan"),
    ("train-filter", "--batch-size", "-3", "got -3"),
    ("train-filter", "--max-length", "8", "must be between 16 and 16777216, got 8"),
]


@pytest.mark.parametrize("command, flag, value, expected", CASES)
def test_a_bad_hyper_parameter_is_one_line_before_any_loading(
    tmp_path, capsys, command, flag, value, expected
):
    out = tmp_path / "a" / "MODEL"
    code = cli.main([*COMMANDS[command], "--out", str(out), f"{flag}={value}"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert err[0] == f"error: {flag}: {expected}" or (
        err[0].startswith(f"error: {flag}: ") and expected in err[0]
    )
    assert list(tmp_path.iterdir()) == []  # nothing written, not even --out's folder


@pytest.mark.parametrize(
    "flag, value, expected",
    [
        ("--max-length", "1", "--max-length: must be between 16 and 16777216, got 1"),
        ("--batch-size", "0", "--batch-size: must be at least 1, got 0"),
        ("--batch-size", "99999999999", "--batch-size: must be at most 2,147,483,647, got 99999999999"),
        ("--threshold", "nan", "--threshold: must be in (0, 1), got nan"),
    ],
)
def test_evaluate_numbers_are_one_line(tmp_path, capsys, flag, value, expected):
    code = cli.main(["evaluate", "MISSING-MODEL", "DATA", flag, value, "--out", str(tmp_path / "r.json")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err == [f"error: {expected}"]
    assert list(tmp_path.iterdir()) == []


def test_a_nan_loss_is_written_as_null_never_bare_nan(tmp_path):
    write_provenance(
        str(tmp_path), {"history": [{"epoch": 1, "heldout_perplexity": math.nan}], "lr": math.inf}
    )

    def refuse(constant):
        raise AssertionError(f"bare {constant} in JSON")

    value = json.loads((tmp_path / "provenance.json").read_text(), parse_constant=refuse)
    assert value == {"history": [{"epoch": 1, "heldout_perplexity": None}], "lr": None}


@pytest.mark.parametrize("stride", ["0", "-4"])
def test_score_shuffle_stride_below_one_is_one_line(tmp_path, capsys, stride):
    """``--stride 0`` ran with the default stride (0 was taken for "not given")."""
    code = cli.main(
        ["score-shuffle", "M", "D", "--window", "exact", f"--stride={stride}", "--out", str(tmp_path / "o")]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err == [f"error: --stride: must be >= 1, got {stride}"]
    assert list(tmp_path.iterdir()) == []
