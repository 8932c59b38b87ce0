"""Beam stage that scores intruder candidates with the adversarial classifier (``--filter MODEL_DIR``).

Input: candidate dicts (fields of ``schemas.CANDIDATE_SCHEMA``) each with an extra ``"document"`` key, the
document's sentences with the candidate in place at ``replaced_index``. Output: the same dicts without
``"document"``, with ``filter_score`` (intruder probability of the replaced position) and ``difficulty``
(``easy`` if ``filter_score >= easy_threshold`` else ``hard``). Counters (namespace ``filter``): ``scored``,
``truncated`` (inputs cut to ``max_length``), ``oom_retries`` (GPU batches halved), ``batches``.
"""

from __future__ import annotations

import apache_beam as beam
from apache_beam.ml.inference.base import ModelHandler, PredictionResult, RunInference

from incoherent.corpora.selection import DEFAULT_EASY_THRESHOLD, difficulty
from incoherent.filters.handler import IntruderModelHandler, check_model_dir


def with_score(result: PredictionResult, easy_threshold: float) -> dict:
    """The candidate row of a prediction: ``document`` dropped, ``filter_score`` and ``difficulty`` set."""
    row = {k: v for k, v in result.example.items() if k != "document"}
    score = float(result.inference)
    row["filter_score"] = score
    row["difficulty"] = difficulty(score, easy_threshold)
    return row


class ScoreCandidates(beam.PTransform):
    """Score every candidate document through ``RunInference`` with :class:`IntruderModelHandler`.

    ``handler=`` replaces the model (e.g. :class:`filters.handler.FixedScoreHandler` in tests).
    """

    def __init__(
        self,
        model_dir: str | None,
        device: str = "auto",
        batch_size: int = 16,
        max_length: int = 512,
        easy_threshold: float = DEFAULT_EASY_THRESHOLD,
        dtype: str = "auto",
        handler: ModelHandler | None = None,
        share_across_processes: bool = False,
        threads: int = 0,
    ):
        super().__init__()
        self._easy_threshold = easy_threshold
        if handler is None:
            # Validate the model directory now, before any work starts (the workers load it again).
            check_model_dir(model_dir)
            handler = IntruderModelHandler(
                model_dir,
                device=device,
                batch_size=batch_size,
                max_length=max_length,
                dtype=dtype,
                share_across_processes=share_across_processes,
                threads=threads,
            )
        self._handler = handler

    def expand(self, candidates):
        return (
            candidates
            | "ScoreWithModel" >> RunInference(self._handler)
            | "AddDifficulty" >> beam.Map(with_score, easy_threshold=self._easy_threshold)
        )
