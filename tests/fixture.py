"""``fixture``: ``pytest.fixture`` where pytest is installed, else a decorator that leaves the function as it is,
so the model and data builders of ``tests/tiny_model.py``, ``tests/tiny_lm.py`` and ``tests/shuffle_fixtures.py``
also serve ``bench/gpu_suite.py`` on a GPU machine without pytest."""

from __future__ import annotations

try:
    from pytest import fixture
except ImportError:  # no pytest: the builders only

    def fixture(*args, **kwargs):
        if args and callable(args[0]):
            return args[0]
        return lambda function: function


__all__ = ["fixture"]
