"""bench/gpu_suite.py --smoke: the three measurements and their peers run on a CPU with tiny models, without
Beam or pytest importable, and write one JSON with the device, the versions, each figure and its peer's."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Run the suite where apache_beam and pytest cannot be imported (a bare GPU machine has neither).
RUN_WITHOUT_BEAM = """
import runpy, sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("apache_beam", "pytest"):
            raise ImportError("not installed here: " + name)
sys.meta_path.insert(0, Block())
sys.argv = ["gpu_suite.py", *sys.argv[1:]]
runpy.run_path("bench/gpu_suite.py", run_name="__main__")
"""


@pytest.mark.e2e
def test_smoke_suite_runs_every_measurement_and_peer(tmp_path):
    out = tmp_path / "suite.json"
    env = {**os.environ, "PYTHONPATH": ROOT}
    done = subprocess.run(
        [sys.executable, "-c", RUN_WITHOUT_BEAM, "--smoke", "--out", str(out), "--work", str(tmp_path)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["mode"] == "smoke" and report["device"]["device"] == "cpu"
    assert report["versions"]["torch"] and report["versions"]["transformers"]
    assert report["peaks_flops"]["float32"]["measured_matmul"] > 0
    scorer = report["scorer"]
    assert scorer["tokens"] > 1000 and scorer["ours"]["tokens_per_second"] > 0
    assert scorer["authors_loop"]["max_score_difference"] < 1e-4
    if report["versions"]["lm_eval"]:
        lm_eval = scorer["lm_eval"]
        assert lm_eval["one_window_texts"] > 0 and lm_eval["max_score_difference_one_window"] < 1e-4
        assert scorer["ratio_vs_lm_eval"] > 0 and 0 < lm_eval["mfu_vs_measured_matmul"] < 1
    else:
        assert "not installed" in scorer["lm_eval"]["skipped"]
    flt = report["filter"]
    assert flt["ours"]["documents_per_second"] > 0 and flt["plain_transformers"]["documents_per_second"] > 0
    assert "GPU only" in flt["ours_compiled"]["skipped"]
    training = report["training"]
    for ours, peer in (("finetune_lm", "trainer_lm"), ("train_shuffle", "trainer_classifier")):
        assert training[ours]["precision"] == "float32"
        assert training[ours]["tokens"] == training[peer]["tokens"] > 0  # the same examples on both sides
        assert training[ours]["tokens_per_second"] > 0 and training[peer]["tokens_per_second"] > 0
    assert "wrote" in done.stdout
