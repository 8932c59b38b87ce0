"""The retrieval ``incoherent intruders`` runs itself when ``--index``/``--neighbors`` leave a source without.

For each DOCS_DIR with a source lacking an index or neighbours, :func:`retrieval_for` runs ``incoherent index``
and ``incoherent neighbors`` (each in its own process, as ``build`` runs stages) into a temporary directory,
and removes it when the intruder pipeline is done. ``incoherent build`` always passes both, so it keeps them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile

LOG = logging.getLogger("incoherent.intruders")


@contextlib.contextmanager
def retrieval_for(
    docs_dirs: list[str], sources_by_dir: dict[str, list[str]], index_map, neighbor_map, k, beam_args
):
    """Index and neighbour directories per source; builds missing ones in a temporary directory."""
    missing = [
        d for d in docs_dirs if any(s not in index_map or s not in neighbor_map for s in sources_by_dir[d])
    ]
    if not missing:
        yield index_map, neighbor_map
        return
    from incoherent.pipelines.commands import run_in_process

    work = tempfile.mkdtemp(prefix="incoherent-retrieval-")
    try:
        index_map, neighbor_map = dict(index_map), dict(neighbor_map)
        for i, docs_dir in enumerate(missing):
            index_dir = os.path.join(work, f"index-{i}")
            neighbors_dir = os.path.join(work, f"neighbors-{i}")
            LOG.info("building the retrieval index of %s in %s", docs_dir, work)
            run_in_process(["index", docs_dir, "--out", index_dir], beam_args)
            run_in_process(
                ["neighbors", docs_dir, "--index", index_dir, "--k", str(k), "--out", neighbors_dir],
                beam_args,
            )
            for source in sources_by_dir[docs_dir]:
                index_map.setdefault(source, index_dir)
                neighbor_map.setdefault(source, neighbors_dir)
        yield index_map, neighbor_map
    finally:
        shutil.rmtree(work, ignore_errors=True)
