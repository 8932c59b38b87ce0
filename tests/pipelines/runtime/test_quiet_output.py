"""What the commands print: without a terminal (or with ``--quiet``) nothing but their results.

Real runs in a subprocess whose stdout and stderr are pipes, as under CI or a script: no transformers bars
("Loading weights", "Writing model shards"), no ``loss_type=None`` warning, no "No semi_persistent_directory
found" from Beam's worker processes, and the three ingest commands print their summaries in one format.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.shuffle_fixtures import wsj_docs_dir  # noqa: F401
from tests.tiny_lm import tiny_gpt2_dir  # noqa: F401

NOISE = (
    "Loading weights",
    "Writing model shards",
    "loss_type",
    "LOAD REPORT",
    "semi_persistent_directory",
    "it/s]",
)
IN_PROCESS = ["--runner", "DirectRunner", "--direct_running_mode", "in_memory"]


def loud_environment() -> dict[str, str]:
    """This process's environment without the quiet settings an earlier in-process command may have set."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("HF_HUB_DISABLE", "TRANSFORMERS_"))}


def incoherent(*argv, env: dict | None = None) -> subprocess.CompletedProcess:
    environ = loud_environment()
    environ.update(env or {}, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "incoherent.pipelines.cli", *map(str, argv)],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=600,
    )


def noise(output: str) -> list[str]:
    return [line for line in output.splitlines() if any(word in line for word in NOISE)]


@pytest.mark.e2e
def test_model_loading_and_training_print_no_bars_or_warnings(tmp_path, tiny_gpt2_dir, wsj_docs_dir):  # noqa: F811
    # Control: the same load outside the CLI draws transformers' bar, so the check below can fail.
    load = (
        "from transformers import AutoModelForCausalLM; "
        f"AutoModelForCausalLM.from_pretrained({tiny_gpt2_dir!r}).save_pretrained({str(tmp_path / 'copy')!r})"
    )
    control = subprocess.run(
        [sys.executable, "-c", load], env=loud_environment(), capture_output=True, text=True, timeout=300
    )
    assert control.returncode == 0 and "Loading weights" in control.stderr

    out = tmp_path / "ft"
    argv = ["finetune-lm", wsj_docs_dir, "--base-model", tiny_gpt2_dir, "--out", out]
    run = incoherent(*argv, "--max-steps", "2", "--epochs", "1", "--device", "cpu")
    assert run.returncode == 0, run.stderr
    assert noise(run.stdout + run.stderr) == [] and run.stderr.strip() == ""
    assert (out / "model.safetensors").is_file()  # it did load, train and write a model


@pytest.mark.e2e
def test_beam_worker_processes_print_no_staging_warnings(tmp_path):
    beam = ["--direct_running_mode", "multi_processing", "--direct_num_workers", "2"]
    run = incoherent("ingest", "cnn", "samples/cnn/frank", "--out", tmp_path / "docs", *beam)
    assert run.returncode == 0, run.stderr
    assert noise(run.stdout + run.stderr) == [] and run.stderr.strip() == ""


SUMMARY = re.compile(
    r"^(?P<rows>[\d,]+) documents -> (?P<table>\S+/documents-\w+)/  \(read: (?P<read>[\d,]+) (?P<unit>\w+)\)$"
)


@pytest.mark.parametrize(
    "argv, unit, rejected",
    [
        (["wikipedia", "samples/wikipedia/enwiki-latest-pages-articles1.xml-p000000010p000030302-shortened.bz2"], "pages", True),
        (["cnn", "samples/cnn/frank"], "stories", False),
        (["text", "samples/wsj/wsj.jsonl"], "records", False),
    ],
)  # fmt: skip
@pytest.mark.e2e
def test_ingest_commands_print_one_summary_format(tmp_path, argv, unit, rejected):
    out = tmp_path / "docs"
    run = incoherent("ingest", *argv, "--out", out, *IN_PROCESS)
    assert run.returncode == 0 and run.stderr.strip() == "", run.stderr
    lines = run.stdout.splitlines()
    first = SUMMARY.match(lines[0])
    assert first and first["unit"] == unit and first["table"].startswith(str(out)), lines
    assert re.fullmatch(re.escape(f"{out}/run_summary.json") + r" \(\d+\.\d s\)", lines[-1])
    middle = lines[1:-1]
    assert all(re.fullmatch(r"  rejected [a-z_]+: [\d,]+", line) for line in middle), middle
    assert bool(middle) == rejected
    kept, dropped = int(first["rows"].replace(",", "")), sum(int(line.rsplit(" ", 1)[1]) for line in middle)
    if unit != "pages":  # a page can be read without being a record of the stage (pages are read first)
        assert kept + dropped == int(first["read"].replace(",", ""))
