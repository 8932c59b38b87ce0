"""incoherent: coherence-evaluation corpora (INSteD-style intruder sentences, k-block shuffles) with Apache Beam.

The one import package of the distribution. Its subpackages are the repository's top-level folders, mapped by
setuptools' ``package-dir`` (``incoherent.pipelines`` is ``pipelines/``, ``incoherent.retrieval`` is
``retrieval/``, ...): a wheel installs them under ``incoherent/`` and adds no other top-level name.
"""

import os
import sys

# ``python -m incoherent`` (and ``python -m incoherent.pipelines.cli``, how the project starts its own processes) puts
# the current directory first on ``sys.path``: a ``json.py`` or ``dis.py`` lying where the command was started would be
# imported, and run, in place of the standard library's. It goes before any module of ours imports anything
# (Python's own ``runpy`` was read before; ``python -P -m incoherent`` or the console script avoid even that). An
# entry PYTHONPATH names stays. The processes a command starts get PYTHONSAFEPATH (pipelines.runtime.safety).
if sys.argv[:1] == ["-m"] and not sys.flags.safe_path and sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

# In a source checkout that is not installed (``PYTHONPATH=.``), the subpackages are the folders beside this one; an
# install (wheel or editable) finds them itself, and this adds nothing there.
if not os.path.isdir(os.path.join(os.path.dirname(__file__), "pipelines")):
    _root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if os.path.isfile(os.path.join(_root, "pipelines", "cli.py")):
        __path__.append(_root)  # noqa: F821 - a package's own __path__
