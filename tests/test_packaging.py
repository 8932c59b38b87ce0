"""The package as users and the GPU image get it: a wheel and an sdist built from the file set the Docker image
copies (the repository less ``.dockerignore``), checked with ``twine check``; every module of the wheel imports
from the installed copy; and the installed wheel, in a fresh venv, runs ``incoherent build`` with the bundled
config from a working directory outside the repository (the samples ship as ``pipelines/samples/``).

The fresh venv gets the dependencies from this interpreter's environment (a ``.pth`` line), not from an index:
nothing is downloaded. Each test checks that ``pipelines`` was imported from the installed wheel, not from the
repository.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.e2e  # builds a wheel (and a venv): 20-90 s


def dockerignore_patterns() -> list[str]:
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    patterns = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    assert not [p for p in patterns if p.startswith("!")], "exceptions are not implemented here"
    return patterns


def _pattern_regex(pattern: str) -> re.Pattern:
    """Docker's .dockerignore matching for plain patterns: ``**`` any number of folders, ``*`` and ``?`` within
    one path element; a pattern that matches a folder leaves out everything under it."""
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out + "(?:/.*)?")


def test_dockerignore_matching():
    regex = {p: _pattern_regex(p) for p in ("**/__pycache__", ".*_cache", "bench/work", "*.egg-info")}
    assert regex["**/__pycache__"].fullmatch("pipelines/__pycache__/cli.cpython-311.pyc")
    assert regex["**/__pycache__"].fullmatch("__pycache__/x.pyc")
    assert regex[".*_cache"].fullmatch(".ruff_cache/a/b") and not regex[".*_cache"].fullmatch(
        "a/.ruff_cache/b"
    )
    assert regex["bench/work"].fullmatch("bench/work/corpus.jsonl") and not regex["bench/work"].fullmatch(
        "bench/x"
    )
    assert regex["*.egg-info"].fullmatch("incoherent.egg-info/PKG-INFO")
    assert fnmatch.fnmatch("x", "*")  # (fnmatch is not used for matching: its `*` crosses folders)


def docker_context(target: Path) -> list[str]:
    """Copy the files ``docker build .`` would send (the repository less ``.dockerignore``) to ``target``."""
    regexes = [_pattern_regex(p) for p in dockerignore_patterns()]
    copied = []
    for folder, dirs, files in os.walk(ROOT):
        rel_folder = os.path.relpath(folder, ROOT)
        rel_folder = "" if rel_folder == "." else rel_folder + "/"
        dirs[:] = [d for d in dirs if not any(r.fullmatch(rel_folder + d) for r in regexes)]
        for name in files:
            rel = rel_folder + name
            if any(r.fullmatch(rel) for r in regexes):
                continue
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, target / rel)
            copied.append(rel)
    return copied


@pytest.mark.parametrize("name, extras", [("gpu", "dataflow,models"), ("cpu", "aws,dataflow")])
def test_the_dockerfile_builds_its_wheel_from_the_build_context(name, extras):
    dockerfile = (ROOT / "docker" / f"{name}-worker.Dockerfile").read_text()
    copies = re.findall(r"^COPY (.+)$", dockerfile, flags=re.M)
    assert copies == [". .", "--from=wheel /dist /dist"]  # the whole context, then only the wheel
    assert "pip wheel --no-cache-dir --no-deps --wheel-dir /dist ." in dockerfile
    assert f'"${{wheel}}[{extras}]"' in dockerfile
    assert "import incoherent" in dockerfile or "incoherent.pipelines.cli" in dockerfile
    assert not re.search(r"import [^\n]*\bpipelines\.cli", dockerfile.replace("incoherent.pipelines", ""))


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """An sdist and a wheel built (``python -m build``, no isolation: nothing downloaded; the `test` extra pins
    the setuptools it needs) from the Docker build context's file set."""
    context = tmp_path_factory.mktemp("context")
    files = docker_context(context)
    assert "pyproject.toml" in files and "LICENSE" in files and "samples/README.md" in files
    assert not [f for f in files if f.startswith((".venv/", "out/", "bench/work/")) or "__pycache__" in f]
    out = tmp_path_factory.mktemp("dist")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--no-isolation",
            "--sdist",
            "--wheel",
            "--outdir",
            str(out),
            str(context),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    # every folder of data files is a package in pyproject.toml: setuptools warns of none it would drop
    absent = re.findall(
        r"Package '([\w.]+)' is absent from the `packages` configuration", result.stdout + result.stderr
    )
    assert absent == []
    return out


def wheel_of(dist: Path) -> Path:
    (wheel,) = dist.glob("incoherent-*.whl")
    return wheel


def test_metadata_passes_twine_check(dist):
    result = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, sorted(dist.iterdir()))],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    with zipfile.ZipFile(wheel_of(dist)) as z:
        (metadata,) = [n for n in z.namelist() if n.endswith(".dist-info/METADATA")]
        text = z.read(metadata).decode()
        names = z.namelist()
    assert "License-Expression: Apache-2.0" in text and "Requires-Python: <3.14,>=3.11" in text
    for version in ("3.11", "3.12", "3.13"):
        assert f"Classifier: Programming Language :: Python :: {version}" in text
    assert "Provides-Extra: models" in text
    assert re.search(r"^Requires-Dist: torch==[\d.]+; extra == \"models\"$", text, flags=re.M)
    assert not re.search(
        r"^Requires-Dist: (torch|transformers)==[\d.]+$", text, flags=re.M
    )  # not in the light install
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    samples = sorted(n for n in names if n.startswith("incoherent/pipelines/samples/"))
    expected = sorted(
        "incoherent/pipelines/samples/" + str(p.relative_to(ROOT / "samples"))
        for p in (ROOT / "samples").rglob("*")
        if p.is_file()
    )
    assert samples == expected
    assert "incoherent/pipelines/configs/default.yaml" in names


def test_every_module_of_the_wheel_imports(dist, tmp_path):
    target = tmp_path / "installed"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(target),
         str(wheel_of(dist))],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    with zipfile.ZipFile(wheel_of(dist)) as z:
        modules = sorted(
            n[:-3].replace("/", ".").removesuffix(".__init__")
            for n in z.namelist()
            if n.endswith(".py") and ".dist-info" not in n
        )
    assert {
        "incoherent.pipelines.cli",
        "incoherent.annotation.webapp",
        "incoherent.filters.model",
        "incoherent.pipelines.index.transforms",
    } <= set(modules)
    packages = (
        "annotation",
        "corpora",
        "filters",
        "incoherent",
        "pipelines",
        "retrieval",
        "schemas",
        "sources",
    )
    in_repo = sorted(
        ("incoherent." + str(f.relative_to(ROOT).with_suffix("")).replace("/", ".").removesuffix(".__init__"))
        .replace("incoherent.incoherent", "incoherent")
        .replace("incoherent.samples", "incoherent.pipelines.samples")
        for package in packages
        for f in (ROOT / package).rglob("*.py")
        if "__pycache__" not in f.parts
    )
    assert modules == in_repo  # no package left out of pyproject.toml's list
    # one top-level import name: nothing generic (pipelines, filters, schemas, ...) lands in site-packages
    with zipfile.ZipFile(wheel_of(dist)) as z:
        tops = {n.split("/")[0] for n in z.namelist() if ".dist-info" not in n.split("/")[0]}
        top_level = [n for n in z.namelist() if n.endswith(".dist-info/top_level.txt")]
        assert not top_level or z.read(top_level[0]).decode().split() == ["incoherent"]
    assert tops == {"incoherent"}
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "import incoherent.pipelines\n"
        "print(incoherent.pipelines.__file__)\n"
        "print(importlib.util.find_spec('pipelines'))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        env=dict(os.environ, PYTHONPATH=str(target)),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-2:] == [
        str(target / "incoherent" / "pipelines" / "__init__.py"),
        "None",
    ]


def test_the_installed_wheel_builds_outside_the_repository(dist, tmp_path):
    """``pip install incoherent-*.whl`` in a fresh venv, then ``incoherent build --out X`` elsewhere: the
    bundled default config finds the samples inside the installed package."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    # the dependencies: this environment's site-packages, after the venv's own (where the wheel goes)
    Path(site, "zz-dependencies.pth").write_text(
        f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n"
    )
    # a PYTHONPATH naming the checkout (as in `PYTHONPATH=. pytest`) would let pip find the checkout's
    # egg-info and the venv import the checkout: no step of a new user's install sees it
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel_of(dist))],
        env=env, check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = subprocess.run(
        [str(python), "-c", "import incoherent.pipelines.cli as m; print(m.__file__)"],
        cwd=elsewhere, env=env, check=True, capture_output=True, text=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    assert where == str(Path(site) / "incoherent" / "pipelines" / "cli.py")
    # without a clone, the model stack's install command is the extra's pinned requirements, for this venv
    told = subprocess.run(
        [str(python), "-c", "from incoherent.pipelines.runtime.model_stack import install_command; print(install_command())"],
        cwd=elsewhere, env=env, check=True, capture_output=True, text=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    pins = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["models"]
    assert told == f"{python} -m pip install {' '.join(pins)}"
    result = subprocess.run(
        [str(venv / "bin" / "incoherent"), "build", "--out", "built"],
        cwd=elsewhere, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    dataset = elsewhere / "built" / "dataset"
    assert (dataset / "README.md").is_file()
    assert sorted(p.name for p in dataset.glob("intruder-*")) == ["intruder-cnn", "intruder-wikipedia"]
    assert list((dataset / "intruder-cnn").glob("*.parquet"))
    summary = (elsewhere / "built" / "build_summary.json").read_text()
    assert (
        str(Path(site) / "incoherent" / "pipelines" / "samples" / "cnn" / "frank") in summary
    )  # the installed samples
