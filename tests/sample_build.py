"""One small real build shared by the card and publish tests: Wikipedia only (a 2022 minidump, its 2019
version as history), built once per test process with ``incoherent build`` from a config in a temporary folder."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.conftest import ROOT, run_cli

_BUILT: dict[str, Path] = {}

CONFIG = {
    "base": str(ROOT),
    "seed": 0,
    "sources": {
        "wikipedia": {
            "kind": "wikipedia",
            "inputs": ["samples/wikipedia/2022-08-24_minidumps-en_3def73f3.xml.bz2"],
            "history": ["samples/wikipedia/history/2019-08-16_minidumps-en_89657c7a.xml.bz2"],
        }
    },
    "shuffle": {"block_sizes": [1, 3]},
    "card": {"name": "Wikipedia intruders (test build)"},
}


def wikipedia_build(tmp_path_factory) -> Path:
    """The build's output folder (``OUT``); ``OUT/dataset`` holds the card, figures and tables."""
    if "out" not in _BUILT:
        root = tmp_path_factory.mktemp("wikipedia-build")
        config = root / "build.yaml"
        config.write_text(yaml.safe_dump(CONFIG))
        assert run_cli("build", config, "--out", root / "out") == 0
        _BUILT["out"] = root / "out"
    return _BUILT["out"]
