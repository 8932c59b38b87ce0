"""``incoherent annotate``: human verification commands (export, serve, import, report, verify)."""
