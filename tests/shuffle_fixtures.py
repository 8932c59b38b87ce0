"""WSJ documents and a shuffle dataset with train / validation / test splits, built offline from the bundled
sample (test fixtures of ``finetune-lm``, ``train-shuffle`` and the provenance labels of ``score-shuffle``).

Import the fixtures you use: ``from tests.shuffle_fixtures import wsj_docs_dir, wsj_shuffle_dir  # noqa: F401``.
"""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq

from incoherent.schemas import DOCUMENT_SCHEMA
from incoherent.schemas.records import document
from tests.fixture import fixture
from tests.tiny_model import _cached, sample_documents


def write_documents(out_dir: str, docs: list[tuple[str, list[str]]], source: str = "wsj") -> str:
    """``out_dir/documents-<source>/documents-00000-of-00001.parquet``, as ``incoherent ingest`` writes it."""
    config = os.path.join(out_dir, f"documents-{source}")
    os.makedirs(config, exist_ok=True)
    rows = [document(doc_id, source, sentences) for doc_id, sentences in docs]
    pq.write_table(
        pa.Table.from_pylist(rows, schema=DOCUMENT_SCHEMA),
        os.path.join(config, "documents-00000-of-00001.parquet"),
    )
    return out_dir


@fixture(scope="module")
def one_thread():
    """Tiny models train fastest on one torch thread (and do not fight other processes for the cores): torch
    here, and every command run in this process, sees one core (``--torch-threads`` 0 gives one thread)."""
    import pytest  # only under pytest: these builders also serve bench/gpu_suite.py without it
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("incoherent.pipelines.runtime.threads.available_cores", lambda: 1)
        yield
    torch.set_num_threads(before)


@fixture(scope="session")
def wsj_docs_dir(tmp_path_factory) -> str:
    """The WSJ sample's documents of at least 3 sentences, cut to 6 (small: tests train on them), as ingest
    output."""
    return _cached(
        "wsj-docs",
        lambda path: write_documents(path, sample_documents(min_sentences=3, max_sentences=6)),
        tmp_path_factory,
    )


@fixture(scope="session")
def wsj_shuffle_dir(tmp_path_factory, wsj_docs_dir) -> str:
    """``incoherent shuffle`` of those documents, k = 1..3, 30% test, 20% validation, the rest train."""
    from tests.conftest import run_cli

    def make(path):
        out = os.path.join(path, "shuffle")
        code = run_cli(
            "shuffle", wsj_docs_dir, "--out", out, "--block-sizes", "1", "2", "3",
            "--test-fraction", "0.3", "--validation-fraction", "0.2",
        )  # fmt: skip
        assert code == 0

    return os.path.join(_cached("wsj-shuffle", make, tmp_path_factory), "shuffle")
