"""The examples in the code's docstrings run and print what they show (every module of the seven packages and their subpackages)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

PACKAGES = ("pipelines", "retrieval", "filters", "schemas", "sources", "corpora", "annotation")


def modules() -> list[str]:
    names = []
    for package in PACKAGES:
        path = importlib.import_module(f"incoherent.{package}").__path__
        names.extend(m.name for m in pkgutil.walk_packages(path, f"incoherent.{package}.") if not m.ispkg)
    return sorted(names)


def with_examples() -> list[str]:
    found = []
    for name in modules():
        spec = importlib.util.find_spec(name)
        with open(spec.origin, encoding="utf-8") as f:
            if ">>> " in f.read():
                found.append(name)
    return found


@pytest.mark.parametrize("name", with_examples())
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
