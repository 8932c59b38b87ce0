"""Torch's intra-op threads per worker: the cores this process may use, shared by the Beam workers that run
model code at once, never more threads than cores.

Torch starts one intra-op thread per physical core of the machine, in every process that imports it. Under
Beam's multi-process runner each SDK worker does so: two workers on two cores ran four threads, and the shuffle
test with a tiny GPT-2 took 7.5 times as long as with one thread each (``bench/README_score_shuffle.md``).
:func:`threads_per_worker` divides the cores among the workers (at least one thread each); :func:`torch_threads` reads the cores (:func:`available_cores`) and
the workers (:func:`concurrent_workers`) from this machine and Beam's flags; ``--torch-threads N`` sets the
count instead (on a machine other jobs keep busy, one thread is often much faster than several). The count is
applied where the model is loaded, by :func:`filters.threads.use_torch_threads`.

    >>> threads_per_worker(cores=16, workers=4), threads_per_worker(2, 2), threads_per_worker(2, 1, requested=8)
    (4, 1, 8)
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Sequence

from incoherent.pipelines.runtime.options import is_local_runner
from incoherent.schemas.records import InputError

CGROUP_CPU_MAX = "/sys/fs/cgroup/cpu.max"


def threads_per_worker(cores: int, workers: int, requested: int = 0) -> int:
    """Intra-op threads for each of ``workers`` workers running at once on ``cores`` cores: ``requested`` when
    given (> 0), else ``cores // workers``, at least 1 (more workers than cores: one thread each).

    >>> threads_per_worker(8, 1), threads_per_worker(8, 3), threads_per_worker(2, 8), threads_per_worker(8, 8, 2)
    (8, 2, 1, 2)
    """
    if requested > 0:
        return requested
    return max(1, cores // max(1, workers))


def concurrent_workers(
    cores: int,
    local: bool = True,
    running_mode: str = "in_memory",
    num_workers: int = 1,
    external: bool = False,
) -> int:
    """How many Beam workers of this run may run model code at once on one machine's ``cores``.

    - Beam's local engine, ``in_memory`` (the default): one worker, in this process (Beam ignores
      ``--direct_num_workers`` there and says so);
    - ``multi_threading``, ``multi_processing``, or SDK workers of an external pool (``--environment_type``):
      ``--direct_num_workers`` of them (0: one per core, as Beam counts);
    - any other runner (Dataflow, Flink, Spark, a job service): its workers start one SDK process per core,
      so one per core.

    >>> concurrent_workers(8), concurrent_workers(8, running_mode="multi_processing", num_workers=2)
    (1, 2)
    >>> concurrent_workers(8, running_mode="multi_threading", num_workers=0), concurrent_workers(8, local=False)
    (8, 8)
    """
    if not local:
        return cores
    if running_mode == "in_memory" and not external:
        return 1
    return num_workers if num_workers > 0 else cores


def available_cores() -> int:
    """The cores this process may run on: its CPU affinity (``taskset``, a container's cpuset), capped by a
    cgroup v2 CPU quota (``docker --cpus 2`` on a larger machine), at least 1."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cores = os.cpu_count() or 1
    quota = cgroup_quota(CGROUP_CPU_MAX)
    return max(1, min(cores, quota) if quota else cores)


def cgroup_quota(path: str) -> int | None:
    """The cores a cgroup v2 ``cpu.max`` file allows (``"200000 100000"`` -> 2, rounded up), None when it sets
    no limit (``max``) or cannot be read."""
    try:
        with open(path, encoding="ascii") as f:
            quota, period = f.read().split()[:2]
        return max(1, math.ceil(int(quota) / int(period)))
    except (OSError, ValueError):  # no such file, "max", or not two numbers
        return None


def torch_threads(beam_args: Sequence[str] = (), requested: int = 0, cores: int | None = None) -> int:
    """The intra-op threads each worker of a run with Beam flags ``beam_args`` gives torch (``requested``:
    ``--torch-threads``, 0 for automatic). A command without Beam workers (training) passes no flags: one
    worker, every core."""
    cores = available_cores() if cores is None else cores
    if requested > 0 or not beam_args:
        return threads_per_worker(cores, 1, requested)
    from apache_beam.options.pipeline_options import (
        DirectOptions,
        PipelineOptions,
        PortableOptions,
        StandardOptions,
    )

    options = PipelineOptions(list(beam_args))
    direct = options.view_as(DirectOptions)
    workers = concurrent_workers(
        cores,
        local=is_local_runner(options.view_as(StandardOptions).runner),
        running_mode=direct.direct_running_mode,
        num_workers=direct.direct_num_workers,
        external=bool(options.view_as(PortableOptions).environment_type),
    )
    return threads_per_worker(cores, workers)


WORKER_HELP = "torch threads per worker (0: the cores this process may use, divided among the Beam workers)"


def add_torch_threads_argument(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, help: str = WORKER_HELP
) -> None:
    """``--torch-threads N``: torch's intra-op threads (0, the default: automatic, :func:`torch_threads`)."""
    parser.add_argument("--torch-threads", type=int, default=0, metavar="N", help=help)


def check_torch_threads(value: int) -> int:
    """``--torch-threads`` must be >= 0."""
    if value < 0:
        raise InputError(f"--torch-threads: must be >= 0 (0 = automatic), got {value}")
    return value
