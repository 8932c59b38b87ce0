"""The *kind* of a source (``wikipedia``, ``cnn``, ``text``: the ``incoherent ingest`` command that read it), as
its ingest run says it. What differs per source (the test share and the length rule of the intruder method,
:data:`corpora.intruders.KIND_POLICIES`; the terms of its text on the card) follows the kind, never the name: a
Wikipedia source may be called ``enwiki``, and CNN and Daily Mail may be two sources of kind ``cnn``.

An ingest run's ``run_summary.json`` says its kind twice: ``kind`` (written since sources could be named
freely) and ``command`` (``ingest cnn``, in every earlier run too), so a documents folder of any version says it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

INGEST = "ingest "


def run_kind(summary: dict) -> str | None:
    """The kind of source an ingest run read (``None``: not an ingest run).

    >>> run_kind({"command": "ingest cnn"}), run_kind({"command": "ingest text", "kind": "text"})
    ('cnn', 'text')
    >>> run_kind({"command": "index"}) is None
    True
    """
    command = str(summary.get("command", ""))
    if not command.startswith(INGEST):
        return None
    return str(summary.get("kind") or command.removeprefix(INGEST))


def ingest_runs(summaries: Iterable[dict]) -> Iterator[tuple[dict, str, dict]]:
    """``(summary, kind, params)`` of each ingest run: ``command: "ingest cnn"`` -> kind ``"cnn"``."""
    for summary in summaries:
        kind = run_kind(summary)
        if kind is not None:
            yield summary, kind, summary.get("params") or {}


def run_sources(summary: dict, kind: str, params: dict) -> list[str]:
    """The sources an ingest run wrote: its ``documents-<source>`` tables (else its ``--source``, else the kind).

    >>> run_sources({"outputs": {"documents-news": {"documents": 3}}}, "cnn", {})
    ['news']
    """
    names = list(summary.get("outputs") or {})
    sources = [n.removeprefix("documents-") for n in names if n.startswith("documents-")]
    return sources or [params.get("source") or kind]


def source_kinds(summaries: Iterable[dict]) -> dict[str, str]:
    """``{source: kind}`` from the ingest runs.

    >>> source_kinds([{"command": "ingest wikipedia", "params": {"source": "w"}}])
    {'w': 'wikipedia'}
    """
    kinds: dict[str, str] = {}
    for summary, kind, params in ingest_runs(summaries):
        for source in run_sources(summary, kind, params):
            kinds[source] = kind
    return kinds
