"""The examples in the code's docstrings run and print what they show (every module of the seven packages and their
subpackages, and of the floor ``incoherent/``)."""

from __future__ import annotations

import doctest
import importlib
import os
import pkgutil

import pytest

PACKAGES = ("pipelines", "retrieval", "filters", "schemas", "sources", "corpora", "annotation")


def modules() -> list[str]:
    # the floor: the folder of incoherent/__init__.py itself, not the folders it maps
    floor = os.path.dirname(importlib.import_module("incoherent").__file__)
    names = [
        m.name
        for m in pkgutil.walk_packages([floor], "incoherent.")
        if not m.ispkg and m.name != "incoherent.__main__"
    ]
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
