"""``incoherent intruders``: the INSteD intruder-sentence corpus (the command, its transforms, the filter stage)."""
