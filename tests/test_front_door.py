"""The README's commands as a new user types them, word for word: the light install and the test install live
in venvs of their own (a second ``python3.X -m venv .venv`` over the first would silently mix two Pythons),
both git-ignored; CI runs the README's own test command; and the front door states no figure that drifts
unchecked (test counts, download sizes: dated measurements live in docs/install.md)."""

from __future__ import annotations

import re
from collections import defaultdict

from tests.conftest import ROOT
from tests.test_docs import fenced_blocks

README = (ROOT / "README.md").read_text(encoding="utf-8")
VENV = re.compile(r"(?:^|&&\s*|;\s*)(python3(?:\.\d+)?) -m venv (\S+)")


def bash_lines(text: str) -> list[str]:
    return [line for b in fenced_blocks(text) if b["language"] == "bash" for line in b["body"].splitlines()]


def test_each_venv_of_the_readme_has_one_python_and_is_ignored():
    pythons = defaultdict(set)
    for line in bash_lines(README):
        for python, folder in VENV.findall(line):
            pythons[folder].add(python)
    assert set(pythons) == {".venv", ".venv-test"}  # the Quickstart's light venv, the tests' full one
    assert all(ps == {"python3"} for ps in pythons.values()), pythons  # any allowed Python alike
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    for folder in pythons:
        assert f"{folder}/" in ignored
    assert "dist/" in ignored  # what `python -m build` writes


def test_the_readme_runs_each_tool_from_the_venv_that_has_it():
    """The test tools (pytest, ruff) are in `.venv-test` only; the light `.venv` has `incoherent`."""
    for line in bash_lines(README):
        if re.search(r"\bpytest\b|\bruff\b", line):
            assert ".venv-test/bin/" in line and ".venv/bin/" not in line, line


def test_ci_runs_the_readme_test_command():
    (command,) = [line for line in bash_lines(README) if "-m venv .venv-test" in line]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert command in ci.splitlines()  # word for word
    assert ".venv/" not in ci  # CI never touches the light venv of the checkout


def test_ci_stops_when_the_readme_test_command_fails_before_its_tests():
    """Under ``set -e`` a failing command inside ``a && b && c`` does not stop bash, only the last one does: a
    failed install (a full disk) once let ``.ci/run`` go on to "default run done" with no test run. The line after
    the README's command must stop the script whatever part of it failed."""
    import subprocess

    (command,) = [line for line in bash_lines(README) if "-m venv .venv-test" in line]
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    guard = lines[lines.index(command) + 1]
    for failing in ("false && true && true", "true && false && true"):
        script = f"set -euo pipefail\n{failing}\n{guard}\necho went on\n"
        done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30)
        assert done.returncode != 0 and "went on" not in done.stdout, (failing, done)
    done = subprocess.run(["bash", "-c", f"set -euo pipefail\ntrue && true\n{guard}\necho went on\n"],
                          capture_output=True, text=True, timeout=30)  # fmt: skip
    assert done.returncode == 0 and "went on" in done.stdout


def test_the_front_door_states_no_count_that_drifts():
    """Test counts and download sizes change with every test and every upstream release: the README and the
    install page's commands state none (the dated measurements in docs/install.md's tables say when)."""
    install = (ROOT / "docs" / "install.md").read_text(encoding="utf-8")
    for text in (README, "\n".join(bash_lines(install))):
        assert not re.findall(r"\b\d[\d,]* (?:tests|wheels)\b|\b\d[\d,]* of \d[\d,]*\b|\d MB\b", text)


def test_install_page_shows_the_model_stack_line_as_printed():
    """docs/install.md shows the line a clone and a wheel print (pins as pyproject.toml has them)."""
    import tomllib

    install = (ROOT / "docs" / "install.md").read_text(encoding="utf-8")
    pins = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["models"]
    head = "error: incoherent score-shuffle needs the model stack: .venv/bin/python -m pip install"
    assert f"{head} -e '.[models]'\n" in install
    assert f"{head} {' '.join(pins)}\n" in install
    assert "incoherent[models]'" not in install
