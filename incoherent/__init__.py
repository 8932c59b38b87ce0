"""incoherent: coherence-evaluation corpora (INSteD-style intruder sentences, k-block shuffles) with Apache Beam.

The one import package of the distribution. Its subpackages are the repository's top-level folders, mapped by
setuptools' ``package-dir`` (``incoherent.pipelines`` is ``pipelines/``, ``incoherent.retrieval`` is
``retrieval/``, ...): a wheel installs them under ``incoherent/`` and adds no other top-level name.
"""

import os

# In a source checkout that is not installed (``PYTHONPATH=.``), the subpackages are the folders beside this one; an
# install (wheel or editable) finds them itself, and this adds nothing there.
if not os.path.isdir(os.path.join(os.path.dirname(__file__), "pipelines")):
    _root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if os.path.isfile(os.path.join(_root, "pipelines", "cli.py")):
        __path__.append(_root)  # noqa: F821 - a package's own __path__
