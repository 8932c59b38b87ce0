"""The one place that sets torch's thread pools: :func:`use_torch_threads`, called where a model is loaded
(the Beam handlers' ``load_model``, on each worker) and before training starts. The count comes from
:func:`pipelines.runtime.threads.torch_threads` (the cores divided among the workers, or ``--torch-threads``).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

LOG = logging.getLogger("incoherent.threads")


def use_torch_threads(threads: int) -> int:
    """Give torch ``threads`` intra-op threads (and as many inter-op threads, where they can still be set:
    once per process, before any inter-op work); 0 leaves torch's own choice. Returns the intra-op count now in
    force."""
    import torch

    if threads > 0 and torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    if threads > 0 and torch.get_num_interop_threads() != threads:
        try:
            torch.set_num_interop_threads(threads)
        except RuntimeError:  # already set, or inter-op work has started in this process: it stays
            LOG.debug("torch inter-op threads stay at %d", torch.get_num_interop_threads())
    return torch.get_num_threads()


@contextlib.contextmanager
def torch_threads_during(threads: int) -> Iterator[int]:
    """:func:`use_torch_threads` for the duration of a command that runs in the caller's process (training),
    the intra-op count restored afterwards; yields the count in force."""
    import torch

    before = torch.get_num_threads()
    try:
        yield use_torch_threads(threads)
    finally:
        torch.set_num_threads(before)
