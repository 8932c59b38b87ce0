"""The `index` stage: its command (flags and `run`) and its Beam transforms."""
