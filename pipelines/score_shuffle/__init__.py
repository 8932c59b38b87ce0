"""The `score-shuffle` stage: its command (flags and `run`) and its Beam transforms."""
