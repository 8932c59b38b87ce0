"""Torch threads per worker: the count from cores and Beam workers (literal inputs), the flag, and the one place
that applies it (handlers on load, training for its duration)."""

from __future__ import annotations

import pytest

from incoherent.pipelines.runtime import threads
from incoherent.pipelines.runtime.threads import (
    cgroup_quota,
    check_torch_threads,
    concurrent_workers,
    threads_per_worker,
    torch_threads,
)
from incoherent.schemas.records import InputError


def test_threads_per_worker_divides_the_cores_and_never_oversubscribes():
    assert threads_per_worker(cores=8, workers=1) == 8
    assert threads_per_worker(cores=8, workers=2) == 4
    assert threads_per_worker(cores=8, workers=3) == 2  # 6 threads on 8 cores, not 9
    assert threads_per_worker(cores=2, workers=2) == 1
    assert threads_per_worker(cores=2, workers=16) == 1  # at least one thread each
    assert threads_per_worker(cores=1, workers=0) == 1
    assert threads_per_worker(cores=2, workers=2, requested=6) == 6  # --torch-threads wins


def test_concurrent_workers_follow_the_runner():
    assert concurrent_workers(8) == 1  # in_memory: this process only
    assert concurrent_workers(8, running_mode="in_memory", num_workers=4) == 1  # Beam ignores it there
    assert concurrent_workers(8, running_mode="multi_processing", num_workers=2) == 2
    assert concurrent_workers(8, running_mode="multi_processing", num_workers=0) == 8  # Beam: one per core
    assert concurrent_workers(8, running_mode="multi_threading", num_workers=3) == 3
    assert concurrent_workers(8, num_workers=2, external=True) == 2  # SDK workers of a pool on this machine
    assert concurrent_workers(8, local=False) == 8  # Dataflow, Flink, a job service: one SDK process per core


def test_torch_threads_from_beam_flags():
    assert torch_threads([], cores=8) == 8  # training: one process, every core
    assert torch_threads(["--runner", "DirectRunner"], cores=8) == 8
    multi = ["--runner=DirectRunner", "--direct_running_mode=multi_processing", "--direct_num_workers=2"]
    assert torch_threads(multi, cores=8) == 4
    assert torch_threads(multi, cores=2) == 1
    assert torch_threads(multi, requested=3, cores=2) == 3
    pool = ["--environment_type=EXTERNAL", "--environment_config=localhost:1", "--direct_num_workers=4"]
    assert torch_threads(pool, cores=8) == 2
    assert torch_threads(["--runner=PortableRunner", "--job_endpoint=localhost:1"], cores=8) == 1
    assert torch_threads(["--runner=DataflowRunner"], cores=4) == 1


def test_available_cores_is_the_affinity_capped_by_a_cgroup_quota(tmp_path, monkeypatch):
    assert cgroup_quota(str(tmp_path / "missing")) is None
    (tmp_path / "max").write_text("max 100000\n")
    assert cgroup_quota(str(tmp_path / "max")) is None
    (tmp_path / "two").write_text("200000 100000\n")
    assert cgroup_quota(str(tmp_path / "two")) == 2
    (tmp_path / "half").write_text("150000 100000\n")
    assert cgroup_quota(str(tmp_path / "half")) == 2  # 1.5 cores: rounded up
    monkeypatch.setattr(threads.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3, 4, 5})
    monkeypatch.setattr(threads, "CGROUP_CPU_MAX", str(tmp_path / "two"))
    assert threads.available_cores() == 2
    monkeypatch.setattr(threads, "CGROUP_CPU_MAX", str(tmp_path / "max"))
    assert threads.available_cores() == 6


def test_bad_value_is_one_line():
    assert check_torch_threads(0) == 0 and check_torch_threads(4) == 4
    with pytest.raises(InputError, match=r"--torch-threads: must be >= 0"):
        check_torch_threads(-1)


def test_use_torch_threads_sets_and_training_restores():
    torch = pytest.importorskip("torch", reason="torch is not installed (the [models] extra)")

    from incoherent.filters.threads import torch_threads_during, use_torch_threads

    before = torch.get_num_threads()
    try:
        assert use_torch_threads(0) == before  # 0: torch's own choice stays
        with torch_threads_during(1) as now:
            assert now == torch.get_num_threads() == 1
        assert torch.get_num_threads() == before
    finally:
        torch.set_num_threads(before)


def test_handlers_apply_their_threads_when_the_model_loads(monkeypatch):
    pytest.importorskip("torch", reason="torch is not installed (the [models] extra)")
    from incoherent.filters import handler

    applied = []
    monkeypatch.setattr(handler, "use_torch_threads", applied.append)

    class Loaded(Exception):
        pass

    def stop(*args, **kwargs):
        raise Loaded

    monkeypatch.setattr(handler.ScoringModel, "load", stop)
    with pytest.raises(Loaded):
        handler.IntruderModelHandler("model", device="cpu", threads=3).load_model()
    monkeypatch.setattr("incoherent.filters.lm.LanguageModelScorer.load", stop)
    with pytest.raises(Loaded):
        handler.LanguageModelHandler("model", device="cpu", threads=2).load_model()
    assert applied == [3, 2]  # before the model is built: the scorer sizes its chunks by the threads


def test_commands_take_the_flag():
    from incoherent.pipelines.commands import build_parser, selected_module

    for argv in (
        ["score-shuffle", "m", "d", "--out", "o"],
        ["intruders", "d", "--out", "o"],
        ["train-filter", "d", "--out", "o"],
        ["finetune-lm", "d", "--base-model", "m", "--out", "o"],
        ["train-shuffle", "d", "--base-model", "m", "--out", "o"],
    ):
        parser = build_parser(selected_module(argv))
        assert parser.parse_args([*argv, "--torch-threads", "2"]).torch_threads == 2
        assert parser.parse_args(argv).torch_threads == 0
