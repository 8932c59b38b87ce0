"""The shell scripts of tools/: what a shell would run that nobody meant it to."""

from __future__ import annotations

import re

from tests.conftest import ROOT

HEREDOC = re.compile(r"<<-?\s*([A-Za-z_]+)\n(.*?)\n\1\n", re.S)


def test_no_unquoted_heredoc_runs_a_command():
    """An unquoted heredoc (``<<CONF``) substitutes backticks and ``$(...)``: a comment in the Flink
    configuration that named `incoherent probes` in backticks ran ``incoherent probes`` while the cluster
    started. Variables (``$rest``) are what such a heredoc is for; commands are not."""
    found = []
    for script in sorted((ROOT / "tools").glob("*.sh")):
        for match in HEREDOC.finditer(script.read_text()):
            body = match.group(2)
            if "`" in body or "$(" in body:
                found.append(f"{script.name}: <<{match.group(1)}")
    assert not found, found
    flink = (ROOT / "tools" / "flink-cluster.sh").read_text()
    assert any(HEREDOC.finditer(flink))  # the check sees the heredoc
