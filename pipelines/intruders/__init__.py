"""``incoherent intruders``: the INSteD intruder-sentence corpus.

``command`` (flags, checks, run), ``transforms`` (the Beam graph), ``similarity`` (the per-worker index cache),
``filter_stage`` (the adversarial classifier), ``summary`` (the run summary), ``retrieval`` (the index and
neighbours the command builds itself when not given them).
"""
