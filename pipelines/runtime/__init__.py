"""Beam plumbing that knows no stage: ``run`` (running a pipeline), ``tables`` (counters, dead letters, sharded
writes, reading), ``spill`` / ``spill_shards``, ``storage``, ``options``, ``progress``, ``safety`` (output
safety), ``summary`` (run summaries, files written whole), ``errors`` (one-line errors), ``inputs``, ``threads`` (torch threads per worker)."""
