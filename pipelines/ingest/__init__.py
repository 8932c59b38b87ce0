"""The ingest commands: Wikipedia dumps, CNN stories, text collections -> document tables."""
