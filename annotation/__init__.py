"""Human annotation studies: tasks, platform formats, agreement, reports (no Beam)."""
