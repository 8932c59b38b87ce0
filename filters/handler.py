"""Our own Beam ``ModelHandler`` for the intruder classifier (Beam's bundled Hugging Face handlers import
TensorFlow and break under transformers 5).

Examples are candidate dicts carrying ``"document"`` (sentences, candidate in place) and ``replaced_index``;
predictions are ``PredictionResult(candidate, p_intruder)``.

Batching: Beam's length-aware ``BatchElements`` bucketing only applies on its stateful path (with
``max_batch_duration_secs``), so the handler asks ``BatchElements`` for pools of up to
``batch_size * pool_factor`` candidates and :class:`filters.model.ScoringModel` sorts each pool by token
length into micro-batches of ``batch_size`` examples (more when short: at most ``batch_size * max_length``
padded tokens).
"""

from __future__ import annotations

import json
import os
import posixpath
import shutil
import tempfile
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics
from apache_beam.ml.inference.base import ModelHandler, PredictionResult

from incoherent.fileio.paths import is_remote
from incoherent.filters.model import (
    ScoringModel,
    check_classifier_config,
    check_weights,
    load_config,
    resolve_device,
    resolve_dtype,
)
from incoherent.filters.model_files import MAX_CONFIG_BYTES, check_no_code
from incoherent.filters.threads import use_torch_threads
from incoherent.schemas.records import InputError

NAMESPACE = "filter"
LM_NAMESPACE = "score-shuffle"
DEFAULT_POOL_FACTOR = 8
_LOCAL_COPIES: dict[str, str] = {}
UNCOMPRESSED = CompressionTypes.UNCOMPRESSED


def localize(model_dir: str, force_copy: bool = False) -> str:
    """A local directory holding the model: ``model_dir`` itself, or (for ``gs://``, ``s3://`` ... paths that
    Beam's ``FileSystems`` reads) a copy made once per process in a temporary directory."""
    if not (is_remote(model_dir) or force_copy):
        return model_dir
    if model_dir in _LOCAL_COPIES:
        return _LOCAL_COPIES[model_dir]
    files = [m.path for r in FileSystems.match([posixpath.join(model_dir, "*")]) for m in r.metadata_list]
    if not files:
        raise InputError(f"{model_dir}: no model files there")
    local = tempfile.mkdtemp(prefix="incoherent-model-")
    for path in files:
        with (
            FileSystems.open(path, compression_type=UNCOMPRESSED) as src,
            open(os.path.join(local, posixpath.basename(path)), "wb") as dst,
        ):
            shutil.copyfileobj(src, dst, 1 << 24)
    _LOCAL_COPIES[model_dir] = local
    return local


def check_model_dir(model_dir: str) -> None:
    """Cheap checks before a pipeline starts: a local directory fully (weights, 2-label head); a remote one
    for ``config.json`` and safetensors weights (the workers validate the rest when they load it)."""
    if not is_remote(model_dir):
        check_weights(model_dir)
        check_classifier_config(load_config(model_dir), model_dir)
        return
    names = {
        posixpath.basename(m.path)
        for r in FileSystems.match([posixpath.join(model_dir, "*")])
        for m in r.metadata_list
    }
    if "config.json" not in names:
        raise InputError(f"{model_dir}: no config.json, not a Hugging Face model directory")
    with FileSystems.open(posixpath.join(model_dir, "config.json"), compression_type=UNCOMPRESSED) as f:
        config = f.read(MAX_CONFIG_BYTES + 1)
    try:
        config = json.loads(config.decode("utf-8")) if len(config) <= MAX_CONFIG_BYTES else None
    except (UnicodeDecodeError, ValueError, RecursionError):
        config = None
    if not isinstance(config, dict):
        raise InputError(
            f"{model_dir}/config.json: not a JSON object of at most {MAX_CONFIG_BYTES >> 20} MiB"
        )
    check_no_code(model_dir, config)  # the workers check the rest of the directory when they copy it
    if not any(n.endswith(".safetensors") or n == "model.safetensors.index.json" for n in names):
        raise InputError(f"{model_dir}: no model.safetensors weights (pickled weights are never loaded)")


def _items(batch: Sequence[dict]) -> list[tuple[list[str], int]]:
    return [(list(c["document"]), int(c["replaced_index"])) for c in batch]


def _count(counters: dict[str, int]) -> None:
    for name, value in counters.items():
        if value:
            Metrics.counter(NAMESPACE, name).inc(value)


class IntruderModelHandler(ModelHandler[dict, PredictionResult, ScoringModel]):
    """Loads :class:`ScoringModel` once per worker process (or once per machine with
    ``share_across_processes=True``, for big models on GPU workers running several SDK processes)."""

    def __init__(
        self,
        model_dir: str,
        device: str = "auto",
        batch_size: int = 16,
        max_length: int = 512,
        dtype: str = "auto",
        pool_factor: int = DEFAULT_POOL_FACTOR,
        share_across_processes: bool = False,
        threads: int = 0,
        compile: bool = False,
    ):
        """``threads``: torch's intra-op threads in each worker (:func:`pipelines.runtime.threads.torch_threads`;
        0 leaves torch's default); ``compile``: :class:`filters.model.ScoringModel`'s ``torch.compile`` of the
        model (GPU only)."""
        # Pools of at least one micro-batch (BatchElements starts at min_batch_size and grows with speed).
        super().__init__(min_batch_size=batch_size, max_batch_size=batch_size * pool_factor)
        self._model_dir, self._device, self._dtype = model_dir, device, dtype
        self._batch_size, self._max_length = batch_size, max_length
        self._share_across_processes, self._threads = share_across_processes, threads
        self._compile = compile
        # Fail before the pipeline starts on options that can never work (e.g. cuda on a CPU machine).
        resolve_dtype(dtype, resolve_device(device))

    def load_model(self) -> ScoringModel:
        use_torch_threads(self._threads)
        return ScoringModel.load(
            self._model_dir,
            self._device,
            self._dtype,
            batch_size=self._batch_size,
            max_length=self._max_length,
            compile=self._compile,
        )

    def run_inference(
        self, batch: Sequence[dict], model: ScoringModel, inference_args: dict[str, Any] | None = None
    ) -> Iterable[PredictionResult]:
        scores, counters = model.score(_items(batch))
        _count(counters)
        return [PredictionResult(c, s, self._model_dir) for c, s in zip(batch, scores, strict=True)]

    def get_num_bytes(self, batch: Sequence[dict]) -> int:
        return sum(sum(len(s) for s in c["document"]) for c in batch)

    def get_metrics_namespace(self) -> str:
        return NAMESPACE

    def share_model_across_processes(self) -> bool:
        return self._share_across_processes


class LanguageModelHandler(ModelHandler[tuple, PredictionResult, Any]):
    """Scores pools of texts with :class:`filters.lm.LanguageModelScorer`, loaded once per worker process.

    An element is ``(pool id, [(text key, sentences), ...])``; its prediction is ``[(text key, score,
    tokens)]``, each text being its sentences joined with ``join``
    (:meth:`filters.lm.LanguageModelScorer.score_documents`). Every pool is scored on its own (its texts'
    windows bucketed by length together), so a text's score depends on its pool only, never on how the
    runner batches elements: one pool per ``run_inference``.
    """

    def __init__(
        self,
        model_dir: str,
        device: str = "auto",
        dtype: str = "auto",
        join: str = "space",
        threads: int = 0,
        **scorer_options,
    ):
        """``scorer_options``: the keyword arguments of :meth:`filters.lm.LanguageModelScorer.load`;
        ``threads``: torch's intra-op threads in each worker (0: torch's default)."""
        super().__init__(min_batch_size=1, max_batch_size=1)
        self._model_dir, self._device, self._dtype, self._options = model_dir, device, dtype, scorer_options
        self._join, self._threads = join, threads
        resolve_dtype(dtype, resolve_device(device))

    def load_model(self):
        from incoherent.filters.lm import LanguageModelScorer

        use_torch_threads(self._threads)  # before loading: the scorer sizes its LM-head chunks by the threads
        return LanguageModelScorer.load(
            localize(self._model_dir), device=self._device, dtype=self._dtype, **self._options
        )

    def run_inference(self, batch: Sequence[tuple], model, inference_args: dict[str, Any] | None = None):
        out = []
        for pool in batch:
            keys = [key for key, _ in pool[1]]
            scores, counters = model.score_documents([sentences for _, sentences in pool[1]], self._join)
            for name, value in counters.items():
                if value:
                    Metrics.counter(LM_NAMESPACE, name).inc(value)
            out.append(
                PredictionResult(
                    pool, [(k, s, n) for k, (s, n) in zip(keys, scores, strict=True)], self._model_dir
                )
            )
        return out

    def get_num_bytes(self, batch: Sequence[tuple]) -> int:
        return sum(len(s) for pool in batch for _, sentences in pool[1] for s in sentences)

    def get_metrics_namespace(self) -> str:
        return LM_NAMESPACE


class _FixedScores:
    def __init__(self, score_fn: Callable[[dict], float]):
        self.score_fn = score_fn


class FixedScoreHandler(ModelHandler[dict, PredictionResult, _FixedScores]):
    """A handler whose answers the caller controls: ``score_fn(candidate) -> p_intruder`` (for tests).

    ``score_fn`` must be picklable (a module-level function) for multi-process runners.
    """

    def __init__(self, score_fn: Callable[[dict], float], batch_size: int = 4):
        super().__init__(min_batch_size=1, max_batch_size=batch_size)
        self._score_fn = score_fn

    def load_model(self) -> _FixedScores:
        return _FixedScores(self._score_fn)

    def run_inference(self, batch, model, inference_args=None):
        _count({"scored": len(batch)})
        return [PredictionResult(c, float(model.score_fn(c)), "fixed") for c in batch]

    def get_metrics_namespace(self) -> str:
        return NAMESPACE


class ClassifierHandler(LanguageModelHandler):
    """:class:`LanguageModelHandler` with a coherence classifier from ``incoherent train-shuffle``
    (:class:`filters.shuffle_classifier.ClassifierScorer`: a text's score is ``-log P(coherent)``)."""

    def load_model(self):
        from incoherent.filters.shuffle_classifier import ClassifierScorer

        use_torch_threads(self._threads)
        return ClassifierScorer.load(
            localize(self._model_dir), device=self._device, dtype=self._dtype, **self._options
        )
