"""``fixture``: ``pytest.fixture`` where pytest is installed, else a decorator that leaves the function as it is,
so the model and data builders of ``tests/tiny_model.py``, ``tests/tiny_lm.py`` and ``tests/shuffle_fixtures.py``
also serve ``bench/gpu_suite.py`` on a GPU machine without pytest."""

from __future__ import annotations

try:
    import pytest
    from pytest import fixture
except ImportError:  # no pytest: the builders only
    pytest = None

    def fixture(*args, **kwargs):
        if args and callable(args[0]):
            return args[0]
        return lambda function: function


MODEL_STACK = ("torch", "transformers", "tokenizers", "safetensors")


def needs_model_stack() -> None:
    """Under pytest, skip the test that asked for a model when the model stack (the ``[models]`` extra) is not
    installed, as in CI's light installs; elsewhere (the GPU suite) do nothing, the import then fails."""
    if pytest is not None:
        for module in MODEL_STACK:
            pytest.importorskip(module, reason=f"{module} is not installed (the [models] extra)")


__all__ = ["fixture", "needs_model_stack"]
