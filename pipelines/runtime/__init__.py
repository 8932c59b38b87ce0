"""Beam plumbing that knows no stage: running a pipeline, counters and dead letters, sharded writes,
spill, storage, options, progress, output safety."""
